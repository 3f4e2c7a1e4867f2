// Renderer and builder throughput (docs/avatar.md "Performance"). Run pinned to one core:
//   taskset -c 0 build-bench/src/avatar/avatar_renderer_benchmark
// Rendering is single-threaded by design (cv::setNumThreads(1)), so frames/s on one core divided
// by 25 is the number of real-time sessions one core sustains (the sessions_per_core counter).
#include <benchmark/benchmark.h>

#include <cmath>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>

#include "avatar/builder.h"
#include "avatar/face_mesh.h"
#include "avatar/renderer.h"

namespace imago::avatar {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A real portrait when opencv-doc is installed, else the procedural avatar.
const std::string& model(const std::string& aspect) {
  static std::map<std::string, std::string> cache;
  auto& m = cache[aspect];
  if (m.empty()) {
    BuildInput in;
    in.agent_id = "bench";
    in.aspect_ratio = aspect;
    in.model_type = "expression";
    std::string photo = slurp("/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg");
    if (!photo.empty()) in.image_bytes = photo;
    auto r = build_imx(in, {});
    if (!r.ok()) {
      in.image_bytes.reset();
      r = build_imx(in, {});
    }
    m = *r;
  }
  return m;
}

// Ten seconds of speech-like audio with phoneme timing, repeated as needed.
speech::Audio speech_audio() {
  speech::Audio a;
  a.sample_rate = 24000;
  const char* seq[] = {
      "h", "@", "l", "oU", "_", "b", "I", "g", "w", "3:", "l", "d", "m", "aI", "f", "r", "E", "n", "d", "_"};
  double t = 0;
  for (int k = 0; k < 100; ++k) {
    const char* ph = seq[k % 20];
    double dur = ph[0] == '_' ? 0.15 : 0.09;
    a.phonemes.push_back({ph, t, t + dur});
    double amp = ph[0] == '_' ? 0 : 9000;
    int n = static_cast<int>(dur * a.sample_rate);
    for (int i = 0; i < n; ++i)
      a.samples.push_back(static_cast<int16_t>(amp * std::sin(0.04 * a.samples.size())));
    t += dur;
  }
  return a;
}

void BM_Render(benchmark::State& state, const std::string& aspect, int w, int h, bool speaking) {
  auto m = load_model(model(aspect), w, h);
  auto r = Renderer::create(*m);
  speech::Audio a = speech_audio();
  Frame f;
  for (auto _ : state) {
    if (speaking && (*r)->queued_seconds() < 1) {
      state.PauseTiming();
      (void)(*r)->push_audio(a, true);
      state.ResumeTiming();
    }
    if (!speaking && (*r)->frame_index() % 75 == 0) (void)(*r)->trigger_gesture("idle_subtle");
    (*r)->next_frame(f);
    benchmark::DoNotOptimize(f.rgb.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["fps"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["sessions_per_core"] =
      benchmark::Counter(static_cast<double>(state.iterations()) / kFps, benchmark::Counter::kIsRate);
}

// The frames of a blink (the lids falling, shut, rising: draw_lids at work), 512x512, as the
// renderer draws them one after the other with one warper.
void BM_BlinkFrames512(benchmark::State& state) {
  auto m = load_model(model("1:1"), 512, 512);
  const internal::FaceMesh& mesh = internal::mesh_of(**m);
  const std::vector<double> closing = {0.3, 0.6, 0.9, 1.0, 1.0, 0.7, 0.4, 0.1};
  std::vector<std::vector<cv::Point2f>> full(closing.size()), rigid(closing.size());
  std::vector<internal::Pose> poses(closing.size());
  for (size_t i = 0; i < closing.size(); ++i) {
    poses[i].eye_close = closing[i];
    internal::deform_mesh(mesh, poses[i], full[i], rigid[i]);
  }
  cv::Mat base = internal::render_pose(**m, {});
  internal::MeshWarper w(mesh, base);
  cv::Mat canvas = base.clone();
  size_t i = 0;
  for (auto _ : state) {
    w.draw(full[i], rigid[i], poses[i], canvas);
    benchmark::DoNotOptimize(canvas.data);
    i = (i + 1) % closing.size();
  }
  state.counters["fps"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BlinkFrames512)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_Render, square_512_speech, "1:1", 512, 512, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Render, square_512_idle, "1:1", 512, 512, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Render, hd_1280x720_speech, "16:9", 0, 0, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Render, hd_1280x720_idle, "16:9", 0, 0, false)->Unit(benchmark::kMillisecond);

// N speaking sessions sharing one model, rendered round-robin on one thread (one core): one
// iteration is one frame of every session. The session count is sustainable in real time while
// session_fps (frames per second each session gets) stays >= 25.
void BM_ConcurrentSessions512(benchmark::State& state) {
  auto m = load_model(model("1:1"), 512, 512);
  std::vector<std::unique_ptr<Renderer>> sessions;
  for (int i = 0; i < state.range(0); ++i) {
    RendererOptions o;
    o.session_seed = static_cast<uint64_t>(i);
    sessions.push_back(Renderer::create(*m, o).value());
  }
  speech::Audio a = speech_audio();
  Frame f;
  for (auto _ : state) {
    for (auto& r : sessions) {
      if (r->queued_seconds() < 1) {
        state.PauseTiming();
        (void)r->push_audio(a, true);
        state.ResumeTiming();
      }
      r->next_frame(f);
      benchmark::DoNotOptimize(f.rgb.data());
    }
  }
  state.counters["session_fps"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ConcurrentSessions512)->Arg(8)->Arg(16)->Unit(benchmark::kMillisecond);

void BM_Build1MegapixelPhoto(benchmark::State& state) {
  std::string photo = slurp("/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg");
  if (photo.empty()) {
    state.SkipWithError("opencv-doc not installed");
    return;
  }
  // The portrait enlarged to a 1280x800 JPEG (1.02 MP), as a phone photo would arrive.
  cv::Mat img =
      cv::imdecode(cv::Mat(1, static_cast<int>(photo.size()), CV_8UC1, photo.data()), cv::IMREAD_COLOR);
  cv::Mat big;
  cv::resize(img, big, {1280, 800}, 0, 0, cv::INTER_CUBIC);
  std::vector<uint8_t> jpeg;
  cv::imencode(".jpg", big, jpeg);
  BuildInput in;
  in.agent_id = "bench";
  in.image_bytes = std::string(jpeg.begin(), jpeg.end());
  for (auto _ : state) {
    auto r = build_imx(in, {});
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Build1MegapixelPhoto)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace imago::avatar
