// What a speaking room's encoders cost per 40 ms frame (docs/live-protocol.md "Encoded media"), on
// real rendered frames of a talking portrait, not a synthetic picture: the RGB -> YUV 4:2:0
// conversion, libx264, and libopus at each complexity. Run pinned to one core:
//   taskset -c 0 build/src/live/live_media_encoder_benchmark
// CPU time per iteration is the figure; a room at 25 fps spends 25x it per second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <opencv2/imgproc.hpp>

extern "C" {
#include <libswscale/swscale.h>
}

#include "avatar/renderer.h"
#include "avatar/test_support.h"
#include "live/h264_encoder.h"
#include "live/opus_audio_encoder.h"

namespace imago::live {
namespace {

// Ten seconds of speech-like audio with phoneme timing (the renderer's visemes follow it).
speech::Audio speech_audio() {
  speech::Audio a;
  a.sample_rate = 24000;
  const char* seq[] = {
      "h", "@", "l", "oU", "_", "b", "I", "g", "w", "3:", "l", "d", "m", "aI", "f", "r", "E", "n", "d", "_"};
  double t = 0;
  for (int k = 0; k < 100; ++k) {
    const char* ph = seq[k % 20];
    const double dur = ph[0] == '_' ? 0.15 : 0.09;
    a.phonemes.push_back({ph, t, t + dur});
    const double amp = ph[0] == '_' ? 0 : 9000;
    const int n = static_cast<int>(dur * a.sample_rate);
    for (int i = 0; i < n; ++i) {
      const double s = double(a.samples.size());
      // A voiced buzz with formant-like partials: closer to speech for Opus than a sine.
      a.samples.push_back(static_cast<int16_t>(
          amp * (0.6 * std::sin(0.036 * s) + 0.3 * std::sin(0.21 * s) + 0.1 * std::sin(0.55 * s))));
    }
    t += dur;
  }
  return a;
}

// Four seconds of a speaking 512x512 portrait, rendered once per process.
const std::vector<avatar::Frame>& frames() {
  static std::vector<avatar::Frame> out = [] {
    std::vector<avatar::Frame> v;
    auto model = avatar::load_model(avatar::testing::portrait_model("1:1"), 512, 512);
    if (!model.ok()) return v;
    auto r = avatar::Renderer::create(*model);
    if (!r.ok()) return v;
    (void)(*r)->push_audio(speech_audio(), true);
    for (int i = 0; i < 100; ++i) {
      avatar::Frame f;
      (*r)->next_frame(f);
      v.push_back(std::move(f));
    }
    return v;
  }();
  return out;
}

void BM_RgbToYuv420_Swscale(benchmark::State& state) {
  const auto& fs = frames();
  if (fs.empty()) return state.SkipWithError("no frames (opencv-doc's portrait missing?)");
  const int w = fs[0].width, h = fs[0].height;
  SwsContext* sws =
      sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P, SWS_POINT, nullptr, nullptr, nullptr);
  std::vector<uint8_t> yuv(size_t(w) * h * 3 / 2);
  uint8_t* dst[3] = {yuv.data(), yuv.data() + w * h, yuv.data() + w * h + w * h / 4};
  const int dst_stride[3] = {w, w / 2, w / 2};
  size_t i = 0;
  for (auto _ : state) {
    const uint8_t* src[1] = {fs[i++ % fs.size()].rgb.data()};
    const int src_stride[1] = {w * 3};
    sws_scale(sws, src, src_stride, 0, h, dst, dst_stride);
    benchmark::DoNotOptimize(yuv.data());
  }
  sws_freeContext(sws);
}
BENCHMARK(BM_RgbToYuv420_Swscale)->MeasureProcessCPUTime();

void BM_RgbToYuv420_OpenCv(benchmark::State& state) {
  const auto& fs = frames();
  if (fs.empty()) return state.SkipWithError("no frames (opencv-doc's portrait missing?)");
  const int w = fs[0].width, h = fs[0].height;
  cv::setNumThreads(1);
  cv::Mat yuv(h * 3 / 2, w, CV_8UC1);
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = fs[i++ % fs.size()];
    cv::Mat rgb(h, w, CV_8UC3, const_cast<uint8_t*>(f.rgb.data()));
    cv::cvtColor(rgb, yuv, cv::COLOR_RGB2YUV_I420);
    benchmark::DoNotOptimize(yuv.data);
  }
}
BENCHMARK(BM_RgbToYuv420_OpenCv)->MeasureProcessCPUTime();

// The room's whole video encode: conversion, libx264, AVCC framing; a key frame every 50 frames.
void BM_H264Encode(benchmark::State& state) {
  const auto& fs = frames();
  if (fs.empty()) return state.SkipWithError("no frames (opencv-doc's portrait missing?)");
  H264Settings s;
  s.width = fs[0].width;
  s.height = fs[0].height;
  auto enc = H264Encoder::create(s);
  if (!enc.ok()) return state.SkipWithError(enc.status().message().c_str());
  int64_t n = 0, bytes = 0;
  for (auto _ : state) {
    auto p = (*enc)->encode(fs[n % fs.size()].rgb.data(), n, false);
    bytes += p.ok() ? int64_t(p->data.size()) : 0;
    ++n;
  }
  state.counters["kbit_per_s"] = double(bytes) * 8 / 1000 / (double(n) / 25);
}
BENCHMARK(BM_H264Encode)->MeasureProcessCPUTime();

// Two 20 ms Opus packets (one 40 ms frame of audio) at the room's 24 kHz and 32 kbit/s.
void BM_OpusEncode(benchmark::State& state) {
  const auto& fs = frames();
  if (fs.empty()) return state.SkipWithError("no frames (opencv-doc's portrait missing?)");
  auto enc = OpusAudioEncoder::create(24000, 32000, int(state.range(0)));
  if (!enc.ok()) return state.SkipWithError(enc.status().message().c_str());
  std::vector<EncodedPacket> out;
  uint32_t k = 0;
  int64_t bytes = 0, frames_done = 0;
  for (auto _ : state) {
    const auto& f = fs[frames_done % fs.size()];
    out.clear();
    (void)(*enc)->encode(f.audio.data(), f.audio.size(), k, 0, &out);
    k += 2;
    for (auto& p : out) bytes += int64_t(p.data.size());
    ++frames_done;
  }
  state.counters["kbit_per_s"] = double(bytes) * 8 / 1000 / (double(frames_done) / 25);
}
BENCHMARK(BM_OpusEncode)->Arg(1)->Arg(3)->Arg(5)->Arg(10)->MeasureProcessCPUTime();

}  // namespace
}  // namespace imago::live
