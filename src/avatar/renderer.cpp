#include "avatar/renderer.h"

#include <cmath>
#include <deque>
#include <numbers>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>

#include "avatar/gestures.h"
#include "avatar/internal.h"
#include "speech/dsp.h"

namespace imago::avatar {
using namespace internal;

// ---------------------------------------------------------------------------------------------
// Model

struct ModelData {
  Manifest manifest;  // geometry already scaled to the output size
  double scale = 1;
  cv::Mat base;       // RGB frame
  cv::Rect head;      // head region (moves with head motion)
  cv::Mat head_mask;  // CV_8U, head-sized, 255 = moves fully with the head
  cv::Point2d pivot;  // head rotation pivot (neck), frame coordinates
  double face_w = 0;
  cv::Mat interior;  // RGB mouth interior texture
  cv::Mat lids[2];   // RGBA closed-lid sprites (left, right)
  cv::Mat hand;      // RGBA
  cv::Mat heart;     // RGBA
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

Result<cv::Mat> chunk_image(const ImxFile& f, std::string_view type, bool alpha) {
  const std::string* c = f.find(type);
  if (!c) return Status::Invalid("corrupt .imx: missing chunk " + std::string(type));
  auto img = decode_png(*c, alpha ? cv::IMREAD_UNCHANGED : cv::IMREAD_COLOR);
  if (!img.ok()) return img.status();
  cv::Mat m = *img;
  if (alpha) {
    if (m.channels() != 4)
      return Status::Invalid("corrupt .imx: chunk " + std::string(type) + " needs alpha");
    cv::cvtColor(m, m, cv::COLOR_BGRA2RGBA);
  } else {
    cv::cvtColor(m, m, cv::COLOR_BGR2RGB);
  }
  return m;
}

cv::Mat scaled(const cv::Mat& m, double s) {
  if (std::abs(s - 1) < 1e-9) return m;
  cv::Mat out;
  cv::resize(m, out, {std::max(1, int(std::lround(m.cols * s))), std::max(1, int(std::lround(m.rows * s)))},
             0, 0, s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
  return out;
}

}  // namespace

Result<std::shared_ptr<const AvatarModel>> load_model(std::string_view bytes, int width, int height) {
  auto file = read_imx(bytes);
  if (!file.ok()) return file.status();
  auto d = std::make_unique<ModelData>();
  Manifest m = file->manifest;
  auto base = chunk_image(*file, kChunkAppearance, false);
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
  d->face_w = m.face.w;

  auto interior = chunk_image(*file, kChunkMouthInterior, false);
  auto lids = chunk_image(*file, kChunkEyelids, true);
  auto hand = chunk_image(*file, kChunkHand, true);
  auto heart = chunk_image(*file, kChunkHeart, true);
  for (auto* r : {&interior, &lids, &hand, &heart})
    if (!r->ok()) return r->status();
  d->interior = *interior;
  if (lids->cols < 4 || lids->cols % 2 != 0) return Status::Invalid("corrupt .imx: eyelid sprite size");
  int ew = lids->cols / 2;
  for (int i = 0; i < 2; ++i) d->lids[i] = scaled((*lids)(cv::Rect(i * ew, 0, ew, lids->rows)).clone(), s);
  d->hand = scaled(*hand, s);
  d->heart = scaled(*heart, s);
  const std::string* gj = file->find(kChunkGestures);
  if (!gj) return Status::Invalid("corrupt .imx: missing chunk GEST");
  auto gestures = parse_gestures(*gj);
  if (!gestures.ok()) return gestures.status();
  d->gestures = std::move(*gestures);

  // Head region: the face box grown to take in hair, ears and chin; its mask is a feathered
  // ellipse so the moving head blends into the still background and shoulders.
  const Box& f = m.face;
  // Tall enough for hair and chin, short of the shoulders (which must not turn with the head).
  double cx = f.x + f.w / 2, cy = f.y + f.h * 0.40;
  double ax = f.w * 0.76, ay = f.h * 0.80;
  double feather = f.w * 0.16;
  cv::Rect head(int(cx - ax - feather), int(cy - ay - feather), int(2 * (ax + feather)),
                int(2 * (ay + feather)));
  head &= cv::Rect(0, 0, m.width, m.height);
  if (head.area() <= 0) return Status::Invalid("corrupt .imx: face outside the frame");
  d->head = head;
  cv::Mat mask(head.size(), CV_8UC1, cv::Scalar(0));
  cv::ellipse(mask, cv::Point(int(cx - head.x), int(cy - head.y)),
              cv::Size(int(ax - feather * 0.5), int(ay - feather * 0.5)), 0, 0, 360, cv::Scalar(255),
              cv::FILLED, cv::LINE_AA);
  cv::GaussianBlur(mask, mask, {0, 0}, std::max(1.0, feather / 2.5));
  d->head_mask = mask;
  d->pivot = {cx, f.y + f.h * 1.15};
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
  double open, spread, teeth, press;
};
// Mouth parameters per viseme (docs/avatar.md table).
MouthShape shape_for(Viseme v) {
  switch (v) {
    case Viseme::kRest:
      return {0, 0, 0, 0};
    case Viseme::kMBP:
      return {0, 0, 0, 1};
    case Viseme::kAA:
      return {1.0, 0.15, 0.5, 0};
    case Viseme::kEE:
      return {0.35, 0.8, 0.9, 0};
    case Viseme::kOO:
      return {0.3, -1.0, 0.0, 0};
    case Viseme::kFV:
      return {0.14, 0.1, 1.0, 0};
    case Viseme::kTD:
      return {0.3, 0.3, 0.8, 0};
    case Viseme::kSH:
      return {0.25, -0.5, 1.0, 0};
    case Viseme::kOH:
      return {0.7, -0.6, 0.2, 0};
    case Viseme::kEH:
      return {0.55, 0.3, 0.4, 0};
  }
  return {0, 0, 0, 0};
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

inline void sample_rgb(const cv::Mat& src, double x, double y, uint8_t* out) {
  x = std::clamp(x, 0.0, src.cols - 1.001);
  y = std::clamp(y, 0.0, src.rows - 1.001);
  int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  double fx = x - x0, fy = y - y0;
  const uint8_t* r0 = src.ptr<uint8_t>(y0) + x0 * 3;
  const uint8_t* r1 = src.ptr<uint8_t>(y0 + 1) + x0 * 3;
  for (int c = 0; c < 3; ++c) {
    double top = r0[c] + (r0[c + 3] - r0[c]) * fx;
    double bot = r1[c] + (r1[c + 3] - r1[c]) * fx;
    out[c] = static_cast<uint8_t>(top + (bot - top) * fy + 0.5);
  }
}

struct TimedViseme {
  Viseme v;
  int64_t start, end;  // output samples, session timeline
};

struct Segment {
  int64_t start = 0;  // session timeline, output samples
  std::vector<int16_t> pcm;
  std::vector<TimedViseme> visemes;
  bool timed = false;
  bool end_of_turn = true;
  double peak_rms = 1;
  int64_t end() const { return start + static_cast<int64_t>(pcm.size()); }
};

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
  // Envelope followers for prosody (expression) and envelope-only lip sync.
  double env_fast = 0, env_slow = 0, env_open = 0;
  double loud_ref = 0;  // loudness reference for pushed speech (see push)
  int64_t last_push_start = 0;

  cv::Mat canvas, head_buf, warped;
  cv::Rect dirty[2];

  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }

  Status push(std::vector<int16_t> pcm, int rate, const std::vector<speech::PhonemeTiming>* ph, bool eot);
  Pose pose_at(int64_t n, int16_t* audio, bool& speaking, bool& eos, std::string& gesture_name);
  void render(const Pose& p);
  void draw_mouth(const Pose& p);
  void draw_brows(double amount);
  void draw_eyes(double closure);
  void composite_head(const Pose& p);
  void draw_overlays(const Pose& p);
};

Renderer::Renderer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Renderer::~Renderer() = default;

Result<std::unique_ptr<Renderer>> Renderer::create(std::shared_ptr<const AvatarModel> model,
                                                   const RendererOptions& options) {
  if (!model) return Status::Invalid("no model");
  if (options.audio_rate < 8000 || options.audio_rate > 96000 || options.audio_rate % kFps != 0)
    return Status::Invalid("audio_rate must be 8000..96000 and a multiple of 25");
  // One session renders on one core; sessions, not OpenCV's thread pool, are the parallelism.
  static std::once_flag once;
  std::call_once(once, [] { cv::setNumThreads(1); });
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
  impl->head_buf.create(impl->d->head.size(), CV_8UC3);
  impl->warped.create(impl->d->head.size(), CV_8UC3);
  return std::unique_ptr<Renderer>(new Renderer(std::move(impl)));
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
  if (bt >= 0 && bt < 0.17) p.eye_close = bt < 0.06 ? bt / 0.06 : bt < 0.09 ? 1.0 : 1.0 - (bt - 0.09) / 0.08;

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
    // Coarticulation: average the shapes of the phonemes overlapping a window a little wider
    // than the frame, weighted by overlap.
    int64_t ws = fs - spf / 4, we = fe + spf / 4;
    double wsum = 0;
    MouthShape acc{0, 0, 0, 0};
    bool bilabial = false;
    for (const auto& tv : cur->visemes) {
      if (tv.end <= ws || tv.start >= we) continue;
      double w = double(std::min(we, tv.end) - std::max(ws, tv.start));
      MouthShape sh = shape_for(tv.v);
      acc.open += w * sh.open, acc.spread += w * sh.spread, acc.teeth += w * sh.teeth,
          acc.press += w * sh.press;
      wsum += w;
      if (tv.v == Viseme::kMBP && tv.end > fs && tv.start < fe) bilabial = true;
    }
    if (wsum > 0) {
      // The jaw follows loudness (as in envelope mode); the phonemes shape the lips and scale
      // how far this sound opens (an "ee" less than an "a").
      double db = 20 * std::log10(std::max(rms, 1.0) / cur->peak_rms);
      double jaw = std::clamp((db + 28) / 24, 0.0, 1.0);
      p.mouth_open = jaw * (0.35 + 0.65 * acc.open / wsum);
      p.mouth_spread = acc.spread / wsum;
      p.mouth_teeth = acc.teeth / wsum;
      p.mouth_press = acc.press / wsum;
    }
    if (bilabial) p.mouth_open = 0, p.mouth_press = 1, p.mouth_teeth = 0;  // p/b/m close the lips
  } else if (cur) {
    // Envelope-only lip sync: opening follows loudness in dB, quick to open, slower to close.
    double db = 20 * std::log10(std::max(rms, 1.0) / cur->peak_rms);
    double target = std::clamp((db + 28) / 24, 0.0, 1.0);
    env_open = target > env_open ? target : env_open + 0.55 * (target - env_open);
    p.mouth_open = env_open;
    p.mouth_spread = 0.2;
    p.mouth_teeth = 0.6;
  } else {
    env_open = 0;
  }
  // Prosody (expression models): emphasis bursts lift the brows and nod the head.
  if (m.prosody && speaking) {
    double burst = std::clamp(2.5 * (env_fast - env_slow), 0.0, 1.0);
    p.brow += 0.8 * burst;
    p.head_dy += 0.02 * burst;
    p.head_rot += 1.2 * burst * std::sin(tc * 1.3 + phase[4]);
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
      else if (c == kHeart)
        dst = v * (w > 0.01 ? 1 : 0);
      else if (c == kHand)
        dst = std::max(dst, w * v);
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

// Mouth: a per-column piecewise-linear vertical warp of the lips and jaw (upper lip up, lower lip
// and chin down, lips thinned when pressed, corners raised when smiling), a horizontal
// spread/pucker, and the interior texture drawn in the opening. Source is the untouched photo.
void Renderer::Impl::draw_mouth(const Pose& p) {
  if (p.mouth_open < 0.005 && std::abs(p.mouth_spread) < 0.01 && p.mouth_press < 0.01 && p.smile < 0.01)
    return;
  const Manifest& m = d->manifest;
  const cv::Rect& H = d->head;
  const cv::Mat src = d->base(H);
  const double F = d->face_w;
  const double a = std::max(3.0, m.mouth_width / 2);
  const double mx = m.mouth.x - H.x, my = m.mouth.y - H.y;
  const double G = std::min(p.mouth_open, 1.2) * m.mouth_max_open * F;
  const double U = 0.35 * G, D = 0.65 * G;
  const double ws = p.mouth_spread >= 0 ? 1 + 0.12 * p.mouth_spread : 1 + 0.22 * p.mouth_spread;
  const double t = 0.28 * a, k = 1 - 0.4 * p.mouth_press;
  const double top_extent = 0.9 * a, bot_extent = 2.2 * a;
  int x0 = std::max(0, int(mx - 1.8 * a)), x1 = std::min(H.width - 1, int(mx + 1.8 * a));
  int y0 = std::max(0, int(my - top_extent)), y1 = std::min(H.height - 1, int(my + bot_extent));
  if (x1 <= x0 || y1 <= y0) return;
  const double yt = y0, yb = y1, cy = my + 1.3 * a;
  const cv::Mat& tex = d->interior;
  const double tex_scale = tex.rows / std::max(1.0, 0.12 * F);
  const cv::Vec3b cavity = tex.at<cv::Vec3b>(tex.rows - 1, 0);
  const int teeth_rows = tex.rows / 4;
  for (int x = x0; x <= x1; ++x) {
    double rx = (x - mx) / a;
    double hb = std::max(0.0, 1 - (rx / 1.8) * (rx / 1.8));
    hb *= hb;
    double u = rx / (0.92 * ws);
    double prof = std::abs(u) < 1 ? std::sqrt(1 - u * u) : 0;
    double so = -p.smile * 0.2 * a * std::min(rx * rx, 1.2) * hb;
    double ue = my + so - U * prof, le = my + so + D * prof;
    double ut = ue - t * k, lt = le + t * k;
    double cd = cy + 0.8 * D * hb + 0.3 * so;
    for (int y = y0; y <= y1; ++y) {
      uint8_t* out = head_buf.ptr<uint8_t>(y) + x * 3;
      // Horizontal spread/pucker fades out away from the lips.
      double vy = (y - my) / (y > my ? bot_extent : top_extent);
      double vb = std::max(0.0, 1 - vy * vy);
      vb *= vb;
      double sx = mx + (x - mx) / (1 + (ws - 1) * hb * vb);
      double sy;
      if (y < ut)
        sy = yt + (y - yt) * (my - t - yt) / std::max(1e-6, ut - yt);
      else if (y < ue)
        sy = (my - t) + (y - ut) * t / std::max(1e-6, ue - ut);
      else if (y < le) {
        // Inside the opening: interior texture, teeth only as far as the viseme shows them.
        double ty = std::clamp((y - ue) * tex_scale, 0.0, tex.rows - 1.0);
        double tx = std::clamp((u * 0.5 + 0.5) * (tex.cols - 1), 0.0, tex.cols - 1.0);
        cv::Vec3b c = tex.at<cv::Vec3b>(int(ty), int(tx));
        double tw = int(ty) < teeth_rows ? p.mouth_teeth : 1.0;
        double dark = 0.55 + 0.45 * prof;
        double edge = std::clamp(std::min(y - ue, le - y) + 0.5, 0.0, 1.0);  // anti-alias the lip edge
        uint8_t lip[3];
        sample_rgb(src, sx, my, lip);
        for (int ch = 0; ch < 3; ++ch) {
          double v = (cavity[ch] + tw * (c[ch] - cavity[ch])) * dark;
          out[ch] = static_cast<uint8_t>(lip[ch] + edge * (v - lip[ch]));
        }
        continue;
      } else if (y < lt)
        sy = my + (y - le) * t / std::max(1e-6, lt - le);
      else if (y < cd)
        sy = (my + t) + (y - lt) * (cy - my - t) / std::max(1e-6, cd - lt);
      else
        sy = cy + (y - cd) * (yb - cy) / std::max(1e-6, yb - cd);
      sample_rgb(src, sx, sy, out);
    }
  }
}

// Brows: the band above each eye slides up (the forehead compresses, the lid skin stretches).
void Renderer::Impl::draw_brows(double amount) {
  if (amount < 0.01) return;
  const Manifest& m = d->manifest;
  const cv::Rect& H = d->head;
  const cv::Mat src = d->base(H);
  double F = d->face_w;
  double shift = amount * 0.035 * F;
  double ed = std::hypot(m.right_eye.x - m.left_eye.x, m.right_eye.y - m.left_eye.y);
  for (const Point& e : {m.left_eye, m.right_eye}) {
    double ex = e.x - H.x, ey = e.y - H.y;
    double hw = 0.45 * ed, top = ey - 0.75 * ed, bot = ey - 0.05 * ed;
    int x0 = std::max(0, int(ex - hw)), x1 = std::min(H.width - 1, int(ex + hw));
    int y0 = std::max(0, int(top)), y1 = std::min(H.height - 1, int(bot));
    double mid = ey - 0.35 * ed, half = (bot - top) / 2;
    for (int y = y0; y <= y1; ++y) {
      double vy = (y - mid) / half;
      double vb = std::max(0.0, 1 - vy * vy);
      for (int x = x0; x <= x1; ++x) {
        double hx = (x - ex) / hw;
        double hb = std::max(0.0, 1 - hx * hx);
        double w = vb * hb;
        if (w <= 0) continue;
        sample_rgb(src, x, y + shift * w * w, head_buf.ptr<uint8_t>(y) + x * 3);
      }
    }
  }
}

// Eyes: the closed-lid sprite slides down over the eye; its lash line is the moving lid edge.
void Renderer::Impl::draw_eyes(double c) {
  if (c < 0.02) return;
  const Manifest& m = d->manifest;
  const cv::Rect& H = d->head;
  int i = 0;
  for (const Point& e : {m.left_eye, m.right_eye}) {
    const cv::Mat& lid = d->lids[i++];
    int ew = lid.cols, eh = lid.rows;
    int bx = int(std::lround(e.x - H.x - ew / 2.0)), by = int(std::lround(e.y - H.y - eh / 2.0));
    double yl = 0.62 * eh + std::max(1.0, eh / 9.0);
    double shift = (1 - c) * yl;
    double edge = c >= 0.98 ? eh : c * yl;
    for (int r = 0; r < eh; ++r) {
      int y = by + r;
      if (y < 0 || y >= H.height || r >= edge + 1) continue;
      double cover = std::clamp(edge - r, 0.0, 1.0);
      int sr = std::min(eh - 1, int(r + shift));
      const uint8_t* lrow = lid.ptr<uint8_t>(sr);
      const uint8_t* arow = lid.ptr<uint8_t>(r);
      uint8_t* out = head_buf.ptr<uint8_t>(y);
      for (int q = 0; q < ew; ++q) {
        int x = bx + q;
        if (x < 0 || x >= H.width) continue;
        double al = arow[q * 4 + 3] / 255.0 * cover;
        if (al <= 0) continue;
        for (int ch = 0; ch < 3; ++ch)
          out[x * 3 + ch] = static_cast<uint8_t>(out[x * 3 + ch] + al * (lrow[q * 4 + ch] - out[x * 3 + ch]));
      }
    }
  }
}

// The head region moves as one piece (rotation about the neck, translation, breathing scale) and
// is blended into the still frame through the feathered head mask.
void Renderer::Impl::composite_head(const Pose& p) {
  const cv::Rect& H = d->head;
  double F = d->face_w;
  double dx = p.head_dx * F, dy = p.head_dy * F, sc = 1 + p.head_scale;
  cv::Mat dst = canvas(H);
  if (std::abs(dx) < 0.02 && std::abs(dy) < 0.02 && std::abs(p.head_rot) < 0.01 && std::abs(sc - 1) < 1e-4) {
    head_buf.copyTo(dst);
    return;
  }
  cv::Point2f pivot(float(d->pivot.x - H.x), float(d->pivot.y - H.y));
  cv::Mat A = cv::getRotationMatrix2D(pivot, p.head_rot, sc);
  A.at<double>(0, 2) += dx;
  A.at<double>(1, 2) += dy;
  cv::warpAffine(head_buf, warped, A, head_buf.size(), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
  const cv::Mat base = d->base(H);
  for (int y = 0; y < H.height; ++y) {
    const uint8_t* mk = d->head_mask.ptr<uint8_t>(y);
    const uint8_t* b = base.ptr<uint8_t>(y);
    const uint8_t* w = warped.ptr<uint8_t>(y);
    uint8_t* o = dst.ptr<uint8_t>(y);
    for (int x = 0; x < H.width; ++x) {
      int a = mk[x];
      for (int c = 0; c < 3; ++c) {
        int i = x * 3 + c;
        o[i] = static_cast<uint8_t>(b[i] + (((w[i] - b[i]) * a + 127) / 255));
      }
    }
  }
}

namespace {
// Alpha-composites an RGBA sprite transformed by A (sprite -> frame) into `canvas`; returns the
// touched rectangle.
cv::Rect blit(cv::Mat& canvas, const cv::Mat& sprite, const cv::Mat& A, double opacity) {
  std::vector<cv::Point2f> corners = {
      {0, 0}, {float(sprite.cols), 0}, {0, float(sprite.rows)}, {float(sprite.cols), float(sprite.rows)}};
  std::vector<cv::Point2f> tc;
  cv::transform(corners, tc, A);
  cv::Rect r = cv::boundingRect(tc) & cv::Rect(0, 0, canvas.cols, canvas.rows);
  if (r.area() <= 0 || opacity <= 0) return {};
  cv::Mat A2 = A.clone();
  A2.at<double>(0, 2) -= r.x;
  A2.at<double>(1, 2) -= r.y;
  cv::Mat tmp;
  cv::warpAffine(sprite, tmp, A2, r.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0, 0, 0, 0));
  cv::Mat dst = canvas(r);
  for (int y = 0; y < r.height; ++y) {
    const uint8_t* s = tmp.ptr<uint8_t>(y);
    uint8_t* o = dst.ptr<uint8_t>(y);
    for (int x = 0; x < r.width; ++x) {
      double al = s[x * 4 + 3] / 255.0 * opacity;
      if (al <= 0) continue;
      for (int c = 0; c < 3; ++c)
        o[x * 3 + c] = static_cast<uint8_t>(o[x * 3 + c] + al * (s[x * 4 + c] - o[x * 3 + c]));
    }
  }
  return r;
}
}  // namespace

void Renderer::Impl::draw_overlays(const Pose& p) {
  const Manifest& m = d->manifest;
  double F = d->face_w;
  if (p.hand > 0.01) {
    // The hand rises from below beside the face and rocks about the wrist.
    const cv::Mat& h = d->hand;
    cv::Point2f wrist(float(m.face.x + m.face.w * 1.2),
                      float(m.face.y + m.face.h * 1.45 + (1 - p.hand) * h.rows * 1.1));
    cv::Mat A = cv::getRotationMatrix2D(cv::Point2f(h.cols / 2.f, float(h.rows)), -p.hand_angle, 1.0);
    A.at<double>(0, 2) += wrist.x - h.cols / 2.0;
    A.at<double>(1, 2) += wrist.y - h.rows;
    dirty[0] = blit(canvas, h, A, std::min(1.0, p.hand * 1.5));
  }
  if (p.heart > 0.005) {
    double q = std::clamp(p.heart, 0.0, 1.0);
    const cv::Mat& h = d->heart;
    double s = 0.5 + 0.9 * q;
    cv::Point2f c(float(m.mouth.x + q * 0.9 * F), float(m.mouth.y - q * 1.2 * F));
    cv::Mat A = cv::getRotationMatrix2D(cv::Point2f(h.cols / 2.f, h.rows / 2.f), -12 * q, s);
    A.at<double>(0, 2) += c.x - h.cols / 2.0;
    A.at<double>(1, 2) += c.y - h.rows / 2.0;
    double op = q < 0.75 ? 1.0 : (1 - q) / 0.25;
    dirty[1] = blit(canvas, h, A, op);
  }
}

void Renderer::Impl::render(const Pose& p) {
  // Undo last frame's overlays; the head region is rewritten in full below.
  for (cv::Rect& r : dirty) {
    if (r.area() > 0) d->base(r).copyTo(canvas(r));
    r = {};
  }
  d->base(d->head).copyTo(head_buf);
  draw_brows(p.brow);
  draw_mouth(p);
  draw_eyes(p.eye_close);
  composite_head(p);
  draw_overlays(p);
}

void Renderer::next_frame(Frame& out, bool render_image) {
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
  if (!render_image) {
    out.rgb.clear();
    return;
  }
  I.render(p);
  size_t bytes = size_t(out.width) * out.height * 3;
  out.rgb.resize(bytes);
  if (I.canvas.isContinuous())
    std::memcpy(out.rgb.data(), I.canvas.data, bytes);
  else
    for (int y = 0; y < out.height; ++y)
      std::memcpy(out.rgb.data() + size_t(y) * out.width * 3, I.canvas.ptr(y), out.width * 3);
}

Result<std::string> encode_jpeg(const Frame& f, int quality) {
  if (!f.has_image || f.width <= 0 || f.height <= 0 || f.rgb.size() != size_t(f.width) * f.height * 3)
    return Status::Invalid("frame has no image");
  cv::Mat rgb(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.rgb.data())), bgr;
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
