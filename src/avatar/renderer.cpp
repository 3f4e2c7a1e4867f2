#include "avatar/renderer.h"

#include <cmath>
#include <deque>
#include <numbers>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "avatar/face_mesh.h"
#include "avatar/gestures.h"
#include "avatar/internal.h"
#include "speech/dsp.h"
#include "speech/text_phones.h"

namespace imago::avatar {
using namespace internal;

// ---------------------------------------------------------------------------------------------
// Model

struct ModelData {
  Manifest manifest;  // geometry already scaled to the output size
  double scale = 1;
  cv::Mat base;             // RGB frame
  FaceLandmarks landmarks;  // scaled; source "template" for 1.0 models
  FaceMesh mesh;
  std::map<std::string, GestureDef> gestures;
};

AvatarModel::AvatarModel(std::unique_ptr<ModelData> d) : d_(std::move(d)) {}
AvatarModel::~AvatarModel() = default;
const Manifest& AvatarModel::manifest() const {
  return d_->manifest;
}
int AvatarModel::width() const {
  return d_->base.cols;
}
int AvatarModel::height() const {
  return d_->base.rows;
}

namespace {

Result<cv::Mat> appearance(const ImxFile& f) {
  const std::string* c = f.find(kChunkAppearance);
  if (!c) return Status::Invalid("corrupt .imx: missing chunk APPR");
  auto img = decode_png(*c, cv::IMREAD_COLOR);
  if (!img.ok()) return img.status();
  cv::Mat m;
  cv::cvtColor(*img, m, cv::COLOR_BGR2RGB);
  return m;
}

}  // namespace

Result<std::shared_ptr<const AvatarModel>> load_model(std::string_view bytes, int width, int height) {
  auto file = read_imx(bytes);
  if (!file.ok()) return file.status();
  auto d = std::make_unique<ModelData>();
  Manifest m = file->manifest;
  auto base = appearance(*file);
  if (!base.ok()) return base.status();
  if (base->cols != m.width || base->rows != m.height)
    return Status::Invalid("corrupt .imx: appearance size differs from the manifest frame size");
  double s = 1;
  if (width > 0 || height > 0) {
    if (width <= 0 || height <= 0 || width > 4096 || height > 4096)
      return Status::Invalid("render size must be positive and at most 4096");
    s = static_cast<double>(width) / m.width;
    if (std::abs(m.height * s - height) > 1.0)
      return Status::Invalid("render size " + std::to_string(width) + "x" + std::to_string(height) +
                             " does not keep the model's aspect ratio " + m.aspect_ratio);
  }
  d->scale = s;
  if (s != 1) {
    cv::resize(*base, d->base, {width, height}, 0, 0, s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
    m.width = width;
    m.height = height;
  } else {
    d->base = *base;
  }
  auto sp = [&](Point p) { return Point{p.x * s, p.y * s}; };
  m.face = {m.face.x * s, m.face.y * s, m.face.w * s, m.face.h * s};
  m.left_eye = sp(m.left_eye);
  m.right_eye = sp(m.right_eye);
  m.mouth = sp(m.mouth);
  m.mouth_width *= s;

  // Landmarks: the LMKS chunk (1.1), or for 1.0 models the mean face on their eyes and mouth.
  Landmarks68 lm;
  if (const std::string* lc = file->find(kChunkLandmarks)) {
    auto l = landmarks_from_json(*lc);
    if (!l.ok()) return l.status();
    d->landmarks = *l;
    for (size_t i = 0; i < kLandmarkCount; ++i) lm[i] = {l->points[i].x * s, l->points[i].y * s};
  } else {
    lm = template_landmarks({m.left_eye.x, m.left_eye.y}, {m.right_eye.x, m.right_eye.y},
                            {m.mouth.x, m.mouth.y});
    d->landmarks.source = "template";
    d->landmarks.note = "an .imx 1.0 model without landmarks";
  }
  d->landmarks.points.clear();
  for (const auto& q : lm) d->landmarks.points.push_back({q.x, q.y});
  // The dense mesh (1.2) refines the lids' curves; older models use the 68 points alone.
  std::vector<cv::Point2f> dense;
  if (const std::string* mc = file->find(kChunkMesh)) {
    auto dm = mesh_from_json(*mc);
    if (!dm.ok()) return dm.status();
    for (const auto& q : dm->points) dense.emplace_back(float(q.x * s), float(q.y * s));
  }
  auto mesh = build_face_mesh(lm, d->base.size(), dense);
  if (!mesh.ok()) return mesh.status();
  d->mesh = std::move(*mesh);
  fit_open_mouth(d->mesh, d->base);
  fit_lid_creases(d->mesh, d->base);

  const std::string* gj = file->find(kChunkGestures);
  if (!gj) return Status::Invalid("corrupt .imx: missing chunk GEST");
  auto gestures = parse_gestures(*gj);
  if (!gestures.ok()) return gestures.status();
  d->gestures = std::move(*gestures);
  d->manifest = std::move(m);
  return std::shared_ptr<const AvatarModel>(std::make_shared<AvatarModel>(std::move(d)));
}

// ---------------------------------------------------------------------------------------------
// Visemes

Viseme viseme_for_phoneme(std::string_view p) {
  // Strip espeak stress and length marks.
  std::string s;
  for (char c : p)
    if (c != '\'' && c != ',' && c != '%' && c != '=' && c != ':' && c != ';') s.push_back(c);
  // Pauses, and language-switch markers such as "(en)" which are not sounds.
  if (s.empty() || s[0] == '_' || s[0] == ' ' || s[0] == '(') return Viseme::kRest;
  auto starts = [&](std::string_view x) { return s.rfind(x, 0) == 0; };
  if (starts("tS") || starts("dZ") || s[0] == 'S' || s[0] == 'Z') return Viseme::kSH;
  switch (s[0]) {
    case 'p':
    case 'b':
    case 'm':
      return Viseme::kMBP;
    case 'f':
    case 'v':
      return Viseme::kFV;
    case 'w':
    case 'u':
    case 'U':
    case 'y':
    case 'Y':
      return Viseme::kOO;  // y, Y: rounded front vowels
    case 'O':
    case '0':
    case 'o':
      return Viseme::kOH;
    case 'a':
    case 'A':
    case 'V':
      return Viseme::kAA;
    case 'i':
    case 'I':
    case 'e':
    case 'j':
      return Viseme::kEE;
    case 'E':
    case '@':
    case '3':
    case 'W':
      return Viseme::kEH;
    default:
      return Viseme::kTD;  // t d n s z l r k g N h T D x ...
  }
}

const char* viseme_name(Viseme v) {
  static const char* names[] = {"rest", "mbp", "aa", "ee", "oo", "fv", "td", "sh", "oh", "eh"};
  return names[static_cast<int>(v)];
}

namespace {

struct MouthShape {
  double open, spread, teeth, press, tuck;
};
// Mouth parameters per viseme (docs/avatar.md table). `open` is the inner-lip opening in units of
// 0.34 eye distances (face_mesh.cpp), so 1.0 is the widest speaking mouth: measured speech
// openings over the inter-ocular distance run near 0.1 on most sounds and 0.25-0.3 on open
// vowels only (the sizes from which these were set by looking at the contact sheets).
MouthShape shape_for(Viseme v) {
  switch (v) {
    case Viseme::kRest:
      return {0, 0, 0, 0, 0};
    case Viseme::kMBP:
      return {0, 0, 0, 1, 0};
    case Viseme::kAA:
      return {0.85, 0.1, 0.5, 0, 0};
    case Viseme::kEE:
      return {0.55, 0.7, 0.9, 0, 0};
    case Viseme::kOO:
      return {0.5, -1.0, 0.0, 0, 0};
    case Viseme::kFV:
      return {0.15, 0.05, 1.0, 0, 1};
    case Viseme::kTD:
      return {0.42, 0.25, 0.8, 0, 0};
    case Viseme::kSH:
      return {0.38, -0.5, 1.0, 0, 0};
    case Viseme::kOH:
      return {0.75, -0.7, 0.2, 0, 0};
    case Viseme::kEH:
      return {0.65, 0.3, 0.5, 0, 0};
  }
  return {0, 0, 0, 0, 0};
}
// Essence models have six mouth shapes: the extra expression classes fold onto the nearest one.
Viseme essence_fold(Viseme v) {
  switch (v) {
    case Viseme::kTD:
      return Viseme::kEE;
    case Viseme::kSH:
      return Viseme::kOO;
    case Viseme::kOH:
      return Viseme::kAA;
    case Viseme::kEH:
      return Viseme::kAA;
    default:
      return v;
  }
}

double smoothstep(double x) {
  x = std::clamp(x, 0.0, 1.0);
  return x * x * (3 - 2 * x);
}

struct TimedViseme {
  Viseme v;
  int64_t start, end;  // output samples, session timeline
};

struct Segment {
  int64_t start = 0;  // session timeline, output samples
  std::vector<int16_t> pcm;
  std::vector<TimedViseme> visemes;
  // Beats (expression models): where a stressed syllable's vowel starts (session samples) and how
  // loud it is (0..1), for a small nod and brow raise.
  struct Beat {
    int64_t at = 0;
    double strength = 0;
  };
  std::vector<Beat> beats;
  bool timed = false;
  bool end_of_turn = true;
  double peak_rms = 1;
  int64_t end() const { return start + static_cast<int64_t>(pcm.size()); }
};

// Loudness in dB against the segment's reference over [c - half, c + half) of the segment's audio.
double window_db(const Segment& s, int64_t c, int64_t half) {
  const int64_t a = std::max<int64_t>(0, c - half - s.start),
                b = std::min<int64_t>(s.pcm.size(), c + half - s.start);
  if (b <= a) return -100;
  double e = 0;
  for (int64_t i = a; i < b; ++i) e += double(s.pcm[size_t(i)]) * s.pcm[size_t(i)];
  return 20 * std::log10(std::max(std::sqrt(e / double(b - a)), 1.0) / s.peak_rms);
}

struct ActiveGesture {
  const GestureDef* def = nullptr;
  double start = 0, duration = 0;
  double fade_from = -1;  // >= 0: being faded out since this time (replaced by another)
  double fade_weight = 1;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Renderer

struct Renderer::Impl {
  std::shared_ptr<const AvatarModel> model;
  const ModelData* d = nullptr;
  RendererOptions opt;
  int spf = 960;
  mutable std::mutex mu;

  int64_t next_index = 0;
  std::deque<Segment> segments;
  bool pending_eos = false, pending_interrupt = false;
  std::vector<ActiveGesture> gestures;  // current last; earlier ones fading out

  // Idle motion and blinks.
  std::mt19937_64 rng;
  double phase[6] = {};
  double next_blink = 2.0;
  double blink_start = -10;
  // Gaze: where the eyes look (fractions of the eye's width), and when they next move.
  double gaze_x = 0, gaze_y = 0, next_saccade = 1.5;
  // Envelope followers for prosody (expression) and envelope-only lip sync.
  double env_fast = 0, env_slow = 0, env_open = 0;
  // How far a mouth open in the photo has relaxed toward closed lips for speech (0..1).
  double speech_relax = 0;
  double loud_ref = 0;  // loudness reference for pushed speech (see push)
  int64_t last_push_start = 0;

  cv::Mat canvas;
  std::unique_ptr<MeshWarper> warper;
  std::vector<cv::Point2f> full, rigid;

  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }

  Status push(std::vector<int16_t> pcm, int rate, const std::vector<speech::PhonemeTiming>* ph, bool eot);
  void find_beats(Segment& seg, const std::vector<speech::PhonemeTiming>& ph) const;
  Pose pose_at(int64_t n, int16_t* audio, bool& speaking, bool& eos, std::string& gesture_name);
  void render(const Pose& p);
};

Renderer::Renderer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Renderer::~Renderer() = default;

Result<std::unique_ptr<Renderer>> Renderer::create(std::shared_ptr<const AvatarModel> model,
                                                   const RendererOptions& options) {
  if (!model) return Status::Invalid("no model");
  if (options.audio_rate < 8000 || options.audio_rate > 96000 || options.audio_rate % kFps != 0)
    return Status::Invalid("audio_rate must be 8000..96000 and a multiple of 25");
  // One session renders on one core; sessions, not OpenCV's thread pool, are the parallelism.
  internal::use_one_opencv_thread();
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(model);
  impl->d = &impl->model->data();
  impl->opt = options;
  impl->spf = options.audio_rate / kFps;
  impl->rng.seed(impl->d->manifest.seed * 0x9E3779B97F4A7C15ull + options.session_seed);
  for (double& ph : impl->phase) ph = impl->uniform(0, 2 * std::numbers::pi);
  const Manifest& m = impl->d->manifest;
  impl->next_blink = impl->uniform(0.8, m.blink_min_s + 0.5);
  impl->canvas = impl->d->base.clone();
  impl->warper = std::make_unique<MeshWarper>(impl->d->mesh, impl->d->base);
  return std::unique_ptr<Renderer>(new Renderer(std::move(impl)));
}

// Beats for a timed segment: the vowels carrying espeak-ng's primary stress mark, or, for phones
// without stress marks (recognised phones), every vowel; the loudest first, at least 0.35 s apart
// (a nod on every syllable reads as bobbing), those louder than 12 dB under the peak only.
void Renderer::Impl::find_beats(Segment& seg, const std::vector<speech::PhonemeTiming>& ph) const {
  bool marked = false;
  for (const auto& p : ph) marked |= p.phoneme.find('\'') != std::string::npos;
  std::vector<Segment::Beat> cand;
  for (const auto& p : ph) {
    if (!speech::is_vowel_phone(p.phoneme) || (marked && p.phoneme.find('\'') == std::string::npos)) continue;
    const int64_t s = seg.start + int64_t(std::llround(p.start_s * opt.audio_rate)),
                  e = seg.start + int64_t(std::llround(p.end_s * opt.audio_rate));
    if (e <= s) continue;
    const double db = window_db(seg, (s + e) / 2, opt.audio_rate / 20);
    const double loud = std::clamp((db + 12) / 12, 0.0, 1.0);
    if (loud > 0) cand.push_back({s, loud});
  }
  std::sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) { return a.strength > b.strength; });
  const int64_t gap = int64_t(0.35 * opt.audio_rate);
  for (const auto& c : cand) {
    bool near = false;
    for (const auto& b : seg.beats) near |= std::abs(b.at - c.at) < gap;
    if (!near) seg.beats.push_back(c);
  }
}

Status Renderer::Impl::push(std::vector<int16_t> pcm, int rate, const std::vector<speech::PhonemeTiming>* ph,
                            bool eot) {
  if (rate < 4000 || rate > 192000) return Status::Invalid("sample rate out of range");
  if (pcm.size() > static_cast<size_t>(kMaxQueuedSeconds) * rate)
    return Status(Code::kTooLarge, "speech longer than " + std::to_string(kMaxQueuedSeconds) + " s");
  if (rate != opt.audio_rate && !pcm.empty()) {
    auto r = speech::resample(pcm, rate, opt.audio_rate, speech::quality_for_steps(8));
    if (!r.ok()) return r.status();
    pcm = std::move(*r);
  }
  // Bound the queue: a live session speaks messages, not audiobooks.
  int64_t playhead = next_index * spf;
  int64_t queued = segments.empty() ? 0 : std::max<int64_t>(0, segments.back().end() - playhead);
  if (queued + static_cast<int64_t>(pcm.size()) > kMaxQueuedSeconds * opt.audio_rate)
    return Status(Code::kTooLarge,
                  "speech queue full: at most " + std::to_string(kMaxQueuedSeconds) + " s of audio may wait");
  Segment seg;
  seg.start = playhead;
  if (!segments.empty()) seg.start = std::max(playhead, segments.back().end());
  seg.pcm = std::move(pcm);
  seg.end_of_turn = eot;
  // Loudness reference: the loudest 40 ms window of the segment.
  double peak = 0;
  for (size_t i = 0; i < seg.pcm.size(); i += spf) {
    double e = 0;
    size_t n = std::min<size_t>(spf, seg.pcm.size() - i);
    for (size_t k = 0; k < n; ++k) e += double(seg.pcm[i + k]) * seg.pcm[i + k];
    peak = std::max(peak, std::sqrt(e / std::max<size_t>(1, n)));
  }
  // Streams pushed in small chunks must not each be normalized to their own peak (every chunk
  // would open the mouth fully): keep a loudness reference that decays with a 10 s half-life.
  double dt = static_cast<double>(seg.start - last_push_start) / opt.audio_rate;
  loud_ref = std::max(peak, loud_ref * std::pow(0.5, std::max(0.0, dt) / 10.0));
  last_push_start = seg.start;
  seg.peak_rms = std::max(loud_ref, 100.0);
  if (ph && !ph->empty()) {
    seg.timed = true;
    bool essence = d->manifest.visemes < 10;
    for (const auto& p : *ph) {
      Viseme v = viseme_for_phoneme(p.phoneme);
      if (essence) v = essence_fold(v);
      int64_t s = seg.start + static_cast<int64_t>(std::llround(p.start_s * opt.audio_rate));
      int64_t e = seg.start + static_cast<int64_t>(std::llround(p.end_s * opt.audio_rate));
      if (e > s) seg.visemes.push_back({v, s, e});
    }
    if (d->manifest.prosody) find_beats(seg, *ph);
  }
  if (seg.pcm.empty()) {
    if (eot) pending_eos = true;
    return Status::Ok();
  }
  segments.push_back(std::move(seg));
  return Status::Ok();
}

Status Renderer::push_audio(const speech::Audio& audio, bool end_of_turn) {
  std::lock_guard lock(impl_->mu);
  return impl_->push(audio.samples, audio.sample_rate, &audio.phonemes, end_of_turn);
}

Status Renderer::push_pcm(const int16_t* samples, size_t count, int sample_rate, bool end_of_turn) {
  std::lock_guard lock(impl_->mu);
  return impl_->push(std::vector<int16_t>(samples, samples + count), sample_rate, nullptr, end_of_turn);
}

void Renderer::end_turn() {
  std::lock_guard lock(impl_->mu);
  if (impl_->segments.empty())
    impl_->pending_eos = true;
  else
    impl_->segments.back().end_of_turn = true;
}

void Renderer::interrupt() {
  std::lock_guard lock(impl_->mu);
  bool had = !impl_->segments.empty();
  impl_->segments.clear();
  impl_->env_open = 0;
  if (had) impl_->pending_interrupt = true;
}

Status Renderer::trigger_gesture(std::string_view name, double duration_s) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->d->gestures.find(std::string(name));
  if (it == impl_->d->gestures.end()) return Status::Invalid("Unknown gesture " + std::string(name));
  if (duration_s > 120) return Status::Invalid("gesture duration must be at most 120 s");
  double now = impl_->next_index / double(kFps);
  // A running gesture fades out from where it is, so the switch never jumps.
  for (auto& g : impl_->gestures)
    if (g.fade_from < 0) g.fade_from = now;
  ActiveGesture g;
  g.def = &it->second;
  g.start = now;
  g.duration = duration_s > 0 ? std::max(0.4, duration_s) : it->second.default_duration_s;
  impl_->gestures.push_back(g);
  return Status::Ok();
}

double Renderer::gesture_default_s(std::string_view name) const {
  auto it = impl_->d->gestures.find(std::string(name));
  return it == impl_->d->gestures.end() ? 0 : it->second.default_duration_s;
}

bool Renderer::speaking() const {
  std::lock_guard lock(impl_->mu);
  return !impl_->segments.empty();
}
double Renderer::queued_seconds() const {
  std::lock_guard lock(impl_->mu);
  if (impl_->segments.empty()) return 0;
  int64_t playhead = impl_->next_index * impl_->spf;
  return std::max<int64_t>(0, impl_->segments.back().end() - playhead) / double(impl_->opt.audio_rate);
}
int64_t Renderer::frame_index() const {
  std::lock_guard lock(impl_->mu);
  return impl_->next_index;
}
int Renderer::width() const {
  return impl_->d->base.cols;
}
int Renderer::height() const {
  return impl_->d->base.rows;
}
int Renderer::audio_rate() const {
  return impl_->opt.audio_rate;
}
int Renderer::samples_per_frame() const {
  return impl_->spf;
}
const Manifest& Renderer::manifest() const {
  return impl_->d->manifest;
}

Pose Renderer::Impl::pose_at(int64_t n, int16_t* audio, bool& speaking, bool& eos, std::string& gname) {
  const Manifest& m = d->manifest;
  const double t = n / double(kFps), tc = t + 0.5 / kFps;
  const int64_t fs = n * spf, fe = fs + spf;
  Pose p;

  // Idle: slow sway and breathing from incommensurate sines (never visibly repeats).
  if (opt.idle_motion) {
    double sw = m.sway;
    using std::numbers::pi;
    p.head_rot =
        sw * (0.9 * std::sin(2 * pi * tc / 6.7 + phase[0]) + 0.45 * std::sin(2 * pi * tc / 2.9 + phase[1]));
    p.head_dx = sw * 0.007 * std::sin(2 * pi * tc / 8.3 + phase[2]);
    double breath = std::sin(2 * pi * tc / 4.2 + phase[3]);
    p.head_dy = sw * 0.004 * breath;
    p.head_scale = sw * 0.003 * breath;
  }
  // Blinks at varied intervals, now and then a double blink.
  if (tc >= next_blink) {
    blink_start = next_blink;
    next_blink =
        uniform(0, 1) < 0.15 ? blink_start + 0.35 : blink_start + uniform(m.blink_min_s, m.blink_max_s);
  }
  double bt = tc - blink_start;
  // A blink: the lid falls in 70 ms, stays 50 ms and rises in 100 ms (at 25 fps at least one
  // frame shows the eye nearly shut).
  if (opt.blinks && bt >= 0 && bt < 0.22)
    p.eye_close = bt < 0.07 ? bt / 0.07 : bt < 0.12 ? 1.0 : 1.0 - (bt - 0.12) / 0.10;

  // Gaze (with idle motion): fixations of 0.6..3 s joined by saccades (a jump within one frame,
  // as a real one takes 30-50 ms); about half the moves, and most while speaking, return to the
  // camera.
  if (opt.idle_motion) {
    if (tc >= next_saccade) {
      const bool at_camera = gaze_x == 0 && gaze_y == 0;
      if (!at_camera && uniform(0, 1) < (segments.empty() ? 0.55 : 0.75)) {
        gaze_x = gaze_y = 0;
      } else {
        gaze_x = uniform(-0.09, 0.09);
        gaze_y = uniform(-0.03, 0.03);
      }
      next_saccade = tc + (gaze_x == 0 && gaze_y == 0 ? uniform(1.0, 3.5) : uniform(0.5, 1.8));
    }
    p.gaze_x = gaze_x, p.gaze_y = gaze_y;
  }

  // Speech: copy this frame's audio and find the segment it belongs to.
  std::fill(audio, audio + spf, 0);
  const Segment* cur = nullptr;
  speaking = false;
  eos = false;
  for (const auto& s : segments) {
    if (s.end() <= fs || s.start >= fe) continue;
    speaking = true;
    int64_t a = std::max(fs, s.start), b = std::min(fe, s.end());
    std::copy(s.pcm.begin() + (a - s.start), s.pcm.begin() + (b - s.start), audio + (a - fs));
    if (!cur || (s.start <= fs + spf / 2 && s.end() > fs + spf / 2)) cur = &s;
    if (s.end_of_turn && s.end() <= fe) eos = true;
  }
  double e = 0;
  for (int i = 0; i < spf; ++i) e += double(audio[i]) * audio[i];
  double rms = std::sqrt(e / spf);
  double env = cur ? std::clamp(rms / cur->peak_rms, 0.0, 1.0) : 0.0;
  env_fast += 0.45 * (env - env_fast);
  env_slow += 0.06 * (env - env_slow);

  if (cur && cur->timed) {
    // Coarticulation and muscle dynamics in one: each shape is weighted by how much of a
    // Gaussian (sigma 30 ms, about 70 ms wide at half height) centred on the frame its phone
    // covers, so shapes blend across neighbouring phones, an opening rises and falls over
    // 60-80 ms, and time between phones counts as rest. The kernel looks ahead, as lips do
    // (they shape for the next sound before it starts).
    const double centre = fs + spf / 2.0, sigma = 0.03 * opt.audio_rate;
    const double k = 1 / (sigma * std::numbers::sqrt2);
    MouthShape acc{0, 0, 0, 0, 0};
    bool bilabial = false, sounding = false;
    for (const auto& tv : cur->visemes) {
      if (tv.end < centre - 4 * sigma || tv.start > centre + 4 * sigma) continue;
      const double w = 0.5 * (std::erf((tv.end - centre) * k) - std::erf((tv.start - centre) * k));
      const MouthShape sh = shape_for(tv.v);
      acc.open += w * sh.open, acc.spread += w * sh.spread, acc.teeth += w * sh.teeth,
          acc.press += w * sh.press, acc.tuck += w * sh.tuck;
      if (tv.v == Viseme::kMBP && tv.end > fs && tv.start < fe) bilabial = true;
      if (tv.v != Viseme::kMBP && tv.v != Viseme::kRest && tv.start <= centre && tv.end > centre)
        sounding = true;
    }
    // Loudness over 50 ms scales the opening (0.05..1 of the phones' opening, curved so it grows
    // with loudness rather than with decibels): the phones say how far a sound opens at most,
    // the voice how far this syllable goes, and the sounding floor below keeps a dip between
    // two syllables from flapping the lips shut.
    const double db = window_db(*cur, int64_t(centre), opt.audio_rate / 40);
    const double loud = std::pow(std::clamp((db + 28) / 24, 0.0, 1.0), 2.0);
    p.mouth_open = acc.open * (0.05 + 0.95 * loud);
    // A sounding phone keeps a small opening (voiced sounds never seal the lips).
    if (sounding) p.mouth_open = std::max(p.mouth_open, 0.06);
    p.mouth_spread = acc.spread;
    p.mouth_teeth = acc.teeth;
    p.mouth_press = acc.press;
    p.lip_tuck = acc.tuck;
    if (bilabial) p.mouth_open = 0, p.mouth_press = 1, p.mouth_teeth = 0, p.lip_tuck = 0;  // p/b/m close
  } else if (cur) {
    // Envelope-only lip sync: the opening follows loudness in dB, bounded to a speaking mouth
    // (0.7 of the widest), opening over about 60 ms and closing over about 100 ms.
    double db = 20 * std::log10(std::max(rms, 1.0) / cur->peak_rms);
    double target = 0.7 * std::clamp((db + 28) / 24, 0.0, 1.0);
    env_open += (target > env_open ? 0.6 : 0.4) * (target - env_open);
    p.mouth_open = env_open;
    p.mouth_spread = 0.2;
    p.mouth_teeth = 0.6;
  } else {
    env_open = 0;
  }
  // A photo whose mouth is open at rest (a smile with teeth, a shout): while a turn is spoken its
  // lips come together between sounds as a speaking mouth's do, so what speech opens is measured
  // from lips that meet rather than from the photo's open mouth (which otherwise stays open on
  // every quiet sound and is only shut by p/b/m). It relaxes in over about 0.15 s as the turn
  // starts and back to the photo's mouth over about half a second after it (deform_mesh; lips
  // closed in the photo are not affected).
  speech_relax += speaking ? 0.25 * (1 - speech_relax) : -std::min(speech_relax, 0.08);
  p.speech_relax = speech_relax;
  // Prosody (expression models): beats on stressed syllables (timed speech) or emphasis bursts
  // in the loudness (raw audio) lift the brows and nod the head.
  if (m.prosody && speaking) {
    double beat = 0;
    if (cur && cur->timed) {
      // A beat leads its syllable a little (as speakers' nods do), peaks 120 ms later and fades
      // over about half a second.
      const double centre = fs + spf / 2.0, tau = 0.12;
      for (const auto& b : cur->beats) {
        const double dt = (centre - double(b.at)) / opt.audio_rate + 0.06;
        if (dt > 0 && dt < 0.7) beat = std::max(beat, b.strength * (dt / tau) * std::exp(1 - dt / tau));
      }
    } else {
      beat = std::clamp(2.5 * (env_fast - env_slow), 0.0, 1.0);
    }
    p.brow += 0.6 * beat;
    p.head_dy += 0.012 * beat;
    p.head_rot += 1.2 * beat * std::sin(tc * 1.3 + phase[4]);
    p.smile += 0.15;
  }

  // Gestures, each with a smooth envelope; a replaced one fades out over 0.3 s.
  constexpr double kBlend = 0.3;
  gname.clear();
  std::vector<ActiveGesture> keep;
  for (auto& g : gestures) {
    double el = tc - g.start;
    double w = smoothstep(std::min({el / kBlend, (g.duration - el) / kBlend, 1.0}));
    if (g.fade_from >= 0) w *= 1.0 - smoothstep((tc - g.fade_from) / kBlend);
    bool done = el >= g.duration || (g.fade_from >= 0 && tc - g.fade_from >= kBlend);
    if (done) continue;
    keep.push_back(g);
    if (w <= 0) continue;
    Pose gp;
    uint32_t set = evaluate_gesture(*g.def, el / g.duration, el, gp);
    if (g.fade_from < 0) gname = g.def->name;
    double mw = w * g.def->mouth_weight * (speaking ? 0.35 : 1.0);
    for (int c = 0; c < kChannelCount; ++c) {
      if (!(set & (1u << c))) continue;
      double& dst = channel(p, c);
      double v = channel(gp, c);
      if (c == kMouthOpen || c == kMouthSpread || c == kMouthTeeth || c == kMouthPress)
        dst += mw * (v - dst);
      else if (c == kEyeClose)
        dst = std::max(dst, w * v);
      else
        dst += w * v;
    }
  }
  gestures.swap(keep);
  p.mouth_open = std::clamp(p.mouth_open, 0.0, 1.2);
  p.mouth_spread = std::clamp(p.mouth_spread, -1.0, 1.0);
  p.mouth_teeth = std::clamp(p.mouth_teeth, 0.0, 1.0);
  p.mouth_press = std::clamp(p.mouth_press, 0.0, 1.0);
  p.smile = std::clamp(p.smile, 0.0, 1.0);
  p.eye_close = std::clamp(p.eye_close, 0.0, 1.0);
  p.brow = std::clamp(p.brow, 0.0, 1.0);
  return p;
}

// Only the face mesh is re-warped (triangles that move now or moved last frame); the rest of the
// canvas keeps the photo's pixels.
void Renderer::Impl::render(const Pose& p) {
  deform_mesh(d->mesh, p, full, rigid);
  warper->draw(full, rigid, p, canvas);
}

void Renderer::next_frame(Frame& out, bool render_image, bool copy_image) {
  std::lock_guard lock(impl_->mu);
  Impl& I = *impl_;
  int64_t n = I.next_index++;
  out.index = n;
  out.pts_s = n / double(kFps);
  out.width = I.d->base.cols;
  out.height = I.d->base.rows;
  out.sample_rate = I.opt.audio_rate;
  out.audio.resize(I.spf);
  bool eos = false;
  Pose p = I.pose_at(n, out.audio.data(), out.speaking, eos, out.gesture);
  out.interrupted = I.pending_interrupt;
  out.end_of_speech = eos || I.pending_eos || I.pending_interrupt;
  I.pending_eos = I.pending_interrupt = false;
  out.mouth_open = p.mouth_open;
  // Retire segments fully emitted.
  int64_t fe = (n + 1) * I.spf;
  while (!I.segments.empty() && I.segments.front().end() <= fe) I.segments.pop_front();
  out.has_image = render_image;
  out.view = nullptr;
  if (!render_image) {
    out.rgb.clear();
    return;
  }
  I.render(p);
  if (!copy_image && I.canvas.isContinuous()) {
    out.rgb.clear();
    out.view = I.canvas.data;
    return;
  }
  size_t bytes = size_t(out.width) * out.height * 3;
  out.rgb.resize(bytes);
  if (I.canvas.isContinuous())
    std::memcpy(out.rgb.data(), I.canvas.data, bytes);
  else
    for (int y = 0; y < out.height; ++y)
      std::memcpy(out.rgb.data() + size_t(y) * out.width * 3, I.canvas.ptr(y), out.width * 3);
}

const FaceMesh& internal::mesh_of(const AvatarModel& model) {
  return model.data().mesh;
}

cv::Mat internal::render_pose(const AvatarModel& model, const Pose& p, WarpPath path) {
  const ModelData& d = model.data();
  std::vector<cv::Point2f> full, rigid;
  deform_mesh(d.mesh, p, full, rigid);
  MeshWarper w(d.mesh, d.base, path);
  cv::Mat canvas = d.base.clone();
  w.draw(full, rigid, p, canvas);
  return canvas;
}

std::vector<cv::Mat> internal::render_poses(const AvatarModel& model, const std::vector<Pose>& poses,
                                            WarpPath path) {
  const ModelData& d = model.data();
  std::vector<cv::Point2f> full, rigid;
  MeshWarper w(d.mesh, d.base, path);
  cv::Mat canvas = d.base.clone();
  std::vector<cv::Mat> out;
  for (const Pose& p : poses) {
    deform_mesh(d.mesh, p, full, rigid);
    w.draw(full, rigid, p, canvas);
    out.push_back(canvas.clone());
  }
  return out;
}

Result<std::string> encode_jpeg(const Frame& f, int quality) {
  if (!f.has_image || f.width <= 0 || f.height <= 0 ||
      (!f.view && f.rgb.size() != size_t(f.width) * f.height * 3))
    return Status::Invalid("frame has no image");
  cv::Mat rgb(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.pixels())), bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);  // imencode expects BGR
  std::vector<uint8_t> out;
  if (!cv::imencode(".jpg", bgr, out, {cv::IMWRITE_JPEG_QUALITY, std::clamp(quality, 1, 100)}))
    return Status::Internal("JPEG encoding failed");
  return std::string(out.begin(), out.end());
}

Frame Renderer::next_frame() {
  Frame f;
  next_frame(f, true);
  return f;
}

}  // namespace imago::avatar
