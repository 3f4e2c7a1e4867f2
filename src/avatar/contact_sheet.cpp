// Contact sheets of the talking face (`make contact-sheets`, docs/avatar.md "Looking at it"):
// per portrait one PNG with the source photo, the rest frame, the speech shapes as the renderer
// draws them from timed phones (open vowel, closure, rounded vowel, f/v), a mid-blink, each
// gesture at its peak, and 3x close-ups of the widest mouth and the shut eye.
//   avatar_contact_sheet OUT_DIR [PHOTO...]   (default: the opencv-doc portraits and dlib's
//                                               example portraits; the test portraits among them)
//   avatar_contact_sheet --figures [PHOTO...]  (the renderer's opening against the audio)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "avatar/builder.h"
#include "avatar/face_mesh.h"
#include "avatar/gestures.h"
#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "speech/speech_service.h"

namespace {
using namespace imago;
using namespace imago::avatar;

constexpr int kSize = 512, kTile = 320;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Speech with phone timing: each phone held for its duration, voiced at a steady loudness.
speech::Audio phones(const std::vector<std::pair<std::string, double>>& seq) {
  speech::Audio a;
  a.sample_rate = 24000;
  double t = 0;
  for (const auto& [ph, dur] : seq) {
    a.phonemes.push_back({ph, t, t + dur});
    const double amp = ph == "_" ? 0 : 9000;
    const int n = int(dur * a.sample_rate);
    for (int i = 0; i < n; ++i) {
      const double s = double(a.samples.size()) / a.sample_rate;
      a.samples.push_back(
          int16_t(amp * (0.6 * std::sin(2 * M_PI * 140 * s) + 0.4 * std::sin(2 * M_PI * 280 * s))));
    }
    t += dur;
  }
  return a;
}

struct Tile {
  std::string label;
  cv::Mat bgr;
};

cv::Mat to_bgr(const cv::Mat& rgb) {
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  return bgr;
}

cv::Mat crop_to_tile(const cv::Mat& img, cv::Rect r) {
  r &= cv::Rect(0, 0, img.cols, img.rows);
  cv::Mat out;
  cv::resize(img(r), out, {kTile, kTile}, 0, 0, cv::INTER_CUBIC);
  return out;
}

// Centred moving average over three frames (120 ms).
std::vector<double> smooth3(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double s = 0;
    int c = 0;
    for (size_t j = i == 0 ? 0 : i - 1; j <= i + 1 && j < x.size(); ++j) s += x[j], ++c;
    y[i] = s / c;
  }
  return y;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= double(a.size()), mb /= double(b.size());
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sab += (a[i] - ma) * (b[i] - mb), saa += (a[i] - ma) * (a[i] - ma), sbb += (b[i] - mb) * (b[i] - mb);
  return sab / std::sqrt(saa * sbb);
}

// --figures: the renderer's own opening against the audio envelope on a spoken paragraph
// (both smoothed over 120 ms), without re-detection: a quick check while tuning.
int figures(const std::string& photo) {
  static std::unique_ptr<speech::SpeechService> svc = [] {
    speech::SpeechOptions o;
    o.workers = 1;
    o.queue = 4;
    return std::move(speech::make_speech_service(o).value());
  }();
  auto audio = svc->synthesize(
      "Good morning, and thank you for joining us today. My name is Bob, and I will be your guide. We will "
      "begin with a brief overview of the map, then move on to the main points.",
      speech::VoiceSettings{});
  if (!audio.ok()) return 1;
  BuildInput in;
  in.agent_id = "contact_sheet";
  in.aspect_ratio = "1:1";
  in.image_bytes = slurp(photo);
  auto imx = build_imx(in, {});
  if (!imx.ok()) return 1;
  auto model = load_model(*imx, 256, 256);
  auto r = Renderer::create(*model, {});
  if (!(*r)->push_audio(*audio).ok()) return 1;
  std::vector<double> open, env;
  for (int i = 0; i < int(audio->duration_s() * kFps); ++i) {
    Frame f;
    (*r)->next_frame(f, false);
    double e = 0;
    for (int16_t s : f.audio) e += double(s) * s;
    env.push_back(std::sqrt(e / double(f.audio.size())));
    open.push_back(f.mouth_open);
  }
  std::vector<double> sorted = open;
  std::sort(sorted.begin(), sorted.end());
  std::printf("%s: r(open, envelope; 120 ms) = %.3f, open median %.2f, 95th %.2f\n", photo.c_str(),
              pearson(smooth3(open), smooth3(env)), sorted[sorted.size() / 2],
              sorted[sorted.size() * 95 / 100]);
  return 0;
}

int sheet(const std::string& photo, const std::string& out_dir) {
  BuildInput in;
  in.agent_id = "contact_sheet";
  in.aspect_ratio = "1:1";
  in.model_type = "expression";
  in.image_bytes = slurp(photo);
  if (in.image_bytes->empty()) {
    std::fprintf(stderr, "%s: cannot read\n", photo.c_str());
    return 1;
  }
  auto imx = build_imx(in, {});
  if (!imx.ok()) {
    std::fprintf(stderr, "%s: %s\n", photo.c_str(), imx.status().message().c_str());
    return 1;
  }
  auto model = load_model(*imx, kSize, kSize);
  if (!model.ok()) return 1;
  const Manifest& m = (*model)->manifest();
  const double ed = std::hypot(m.right_eye.x - m.left_eye.x, m.right_eye.y - m.left_eye.y);
  const cv::Point2d mid((m.left_eye.x + m.right_eye.x) / 2, (m.left_eye.y + m.right_eye.y) / 2);
  // The face and what lies under the chin (collar), square.
  const int side = int(3.2 * ed);
  const cv::Rect face(int(mid.x - side / 2), int(mid.y - 0.42 * side), side, side);
  const cv::Rect mouth(int(m.mouth.x - 0.6 * ed), int(m.mouth.y - 0.45 * ed), int(1.2 * ed), int(0.9 * ed));
  const cv::Rect eye(int(m.left_eye.x - 0.45 * ed), int(m.left_eye.y - 0.3 * ed), int(0.9 * ed),
                     int(0.6 * ed));

  std::vector<Tile> tiles;
  cv::Mat src = cv::imread(photo);
  {
    const double s = double(kTile) / std::max(src.cols, src.rows);
    cv::Mat small, canvas(kTile, kTile, CV_8UC3, cv::Scalar(40, 40, 40));
    cv::resize(src, small, {}, s, s, cv::INTER_AREA);
    small.copyTo(
        canvas(cv::Rect((kTile - small.cols) / 2, (kTile - small.rows) / 2, small.cols, small.rows)));
    tiles.push_back({"source photo", canvas});
  }
  const cv::Mat rest = to_bgr(internal::render_pose(**model, {}));
  tiles.push_back({"rest", crop_to_tile(rest, face)});

  // Speech shapes through the renderer itself (coarticulation, loudness, dynamics included).
  RendererOptions o;
  o.idle_motion = false;
  o.blinks = false;  // a speech tile on a blink showed shut eyes (the mid-blink tile is its own)
  auto r = Renderer::create(*model, o);
  if (!r.ok()) return 1;
  const std::vector<std::pair<std::string, double>> seq = {
      {"_", 0.4},  {"h", 0.08}, {"A:", 0.32}, {"_", 0.3},  {"@", 0.1}, {"m", 0.16},
      {"@", 0.1},  {"_", 0.3},  {"w", 0.08},  {"u:", 0.3}, {"_", 0.3}, {"@", 0.1},
      {"f", 0.16}, {"@", 0.1},  {"_", 0.3},   {"E", 0.3},  {"_", 0.3}};
  speech::Audio a = phones(seq);
  if (!(*r)->push_audio(a).ok()) return 1;
  std::vector<cv::Mat> frames;
  std::vector<double> opens;
  for (int i = 0; i < int(a.duration_s() * kFps) + 2; ++i) {
    Frame f = (*r)->next_frame();
    cv::Mat rgb(f.height, f.width, CV_8UC3, f.rgb.data());
    frames.push_back(to_bgr(rgb));
    opens.push_back(f.mouth_open);
  }
  auto frame_at = [&](const std::string& ph, int nth = 0) {
    for (const auto& p : a.phonemes)
      if (p.phoneme == ph && nth-- == 0)
        return std::min(int(frames.size()) - 1, int((p.start_s + p.end_s) / 2 * kFps));
    return 0;
  };
  const int fa = frame_at("A:"), fm = frame_at("m"), fu = frame_at("u:"), ff = frame_at("f"),
            fe = frame_at("E");
  char buf[64];
  std::snprintf(buf, sizeof buf, "open vowel 'a' (open %.2f)", opens[fa]);
  tiles.push_back({buf, crop_to_tile(frames[fa], face)});
  tiles.push_back({"closure 'm'", crop_to_tile(frames[fm], face)});
  tiles.push_back({"rounded 'u'", crop_to_tile(frames[fu], face)});
  tiles.push_back({"f (lip to teeth)", crop_to_tile(frames[ff], face)});
  tiles.push_back({"mid vowel 'e'", crop_to_tile(frames[fe], face)});
  internal::Pose blink;
  blink.eye_close = 1;
  const cv::Mat shut = to_bgr(internal::render_pose(**model, blink));
  tiles.push_back({"mid-blink", crop_to_tile(shut, face)});
  internal::Pose look;
  look.gaze_x = 0.09;
  const cv::Mat gaze = to_bgr(internal::render_pose(**model, look));
  auto gestures = internal::parse_gestures(internal::default_gestures_json());
  if (!gestures.ok()) return 1;
  for (const auto& [name, g] : *gestures) {
    internal::Pose p;
    const double u = name == "blow_kiss_heart" ? 0.4 : name == "idle_subtle" ? 0.35 : 0.5;
    internal::evaluate_gesture(g, u, u * g.default_duration_s, p);
    tiles.push_back({name, crop_to_tile(to_bgr(internal::render_pose(**model, p)), face)});
  }
  tiles.push_back({"mouth 3x: 'a'", crop_to_tile(frames[fa], mouth)});
  tiles.push_back({"mouth 3x: 'u'", crop_to_tile(frames[fu], mouth)});
  {
    internal::Pose p;
    internal::evaluate_gesture(gestures->at("blow_kiss_heart"), 0.4,
                               0.4 * gestures->at("blow_kiss_heart").default_duration_s, p);
    tiles.push_back({"mouth 3x: kiss", crop_to_tile(to_bgr(internal::render_pose(**model, p)), mouth)});
    internal::evaluate_gesture(gestures->at("laugh_react"), 0.5,
                               0.5 * gestures->at("laugh_react").default_duration_s, p);
    tiles.push_back({"mouth 3x: laugh", crop_to_tile(to_bgr(internal::render_pose(**model, p)), mouth)});
  }
  tiles.push_back({"mouth 3x: rest", crop_to_tile(rest, mouth)});
  tiles.push_back({"mouth 3x: 'f'", crop_to_tile(frames[ff], mouth)});
  tiles.push_back({"eye 3x: shut", crop_to_tile(shut, eye)});
  tiles.push_back({"eye 3x: gaze right", crop_to_tile(gaze, eye)});
  tiles.push_back({"eye 3x: open", crop_to_tile(rest, eye)});

  const int cols = 5, rows = int(tiles.size() + cols - 1) / cols, label = 22;
  cv::Mat out(rows * (kTile + label), cols * kTile, CV_8UC3, cv::Scalar(255, 255, 255));
  for (size_t i = 0; i < tiles.size(); ++i) {
    const int x = int(i % cols) * kTile, y = int(i / cols) * (kTile + label);
    tiles[i].bgr.copyTo(out(cv::Rect(x, y + label, kTile, kTile)));
    cv::putText(out, tiles[i].label, {x + 4, y + 16}, cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(0, 0, 0), 1,
                cv::LINE_AA);
  }
  const std::string name = std::filesystem::path(photo).stem().string();
  const std::string path = out_dir + "/" + name + ".png";
  if (!cv::imwrite(path, out)) return 1;
  std::printf("%s\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR|--figures [PHOTO...]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const bool measure = out == "--figures";
  if (!measure) std::filesystem::create_directories(out);
  std::vector<std::string> photos(argv + 2, argv + argc);
  if (photos.empty()) {
    const std::string html = "/usr/share/doc/opencv-doc/opencv4/html/",
                      data = "/usr/share/doc/opencv-doc/examples/data/";
    // dlib's examples (Debian's libdlib19.1): a smiling face over a tall row of teeth, and
    // smaller, softer faces in everyday light; none was tuned on.
    const std::string dlib = "/usr/share/doc/libdlib19.1/examples/faces/";
    photos = {html + "230501201_1.jpg", html + "227943776_1.jpg", html + "face_swapped.jpg",
              html + "facereg.jpg",     data + "messi5.jpg",      dlib + "Tom_Cruise_avp_2014_4.jpg",
              dlib + "2008_001009.jpg", dlib + "2009_004587.jpg"};
  }
  int failed = 0;
  for (const auto& p : photos) failed += measure ? figures(p) : sheet(p, out);
  return failed ? 1 : 0;
}
