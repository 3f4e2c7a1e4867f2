// `imagod imx` and `imagod render` as a user runs them: build, inspect and verify a model, render
// speech (the mouth must follow the audio in the decoded MP4), text and gestures, and usage errors.
#include "main/avatar_commands.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <opencv2/imgproc.hpp>

#include "avatar/internal.h"
#include "avatar/renderer.h"
#include "avatar/test_support.h"

namespace imago::avatar {
namespace {
using namespace testing;
namespace fs = std::filesystem;

int call(int (*fn)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return fn(static_cast<int>(argv.size()), argv.data());
}

TEST(AvatarCommands, BuildsInspectsAndRendersSpeechWhoseMouthFollowsTheAudio) {
  TempDir tmp;
  std::string photo = kOpenCvHtml + "face_swapped.jpg";
  std::string model = tmp / "agent.imx";
  ASSERT_EQ(
      call(imx_main, {"build", "--image", photo, "--aspect", "1:1", "--model", "expression", "-o", model}),
      0);
  EXPECT_EQ(call(imx_main, {"verify", model}), 0);
  EXPECT_EQ(call(imx_main, {"info", model}), 0);
  EXPECT_NE(call(imx_main, {"verify", tmp / "missing.imx"}), 0);
  {
    std::string bytes = slurp(model);
    bytes[bytes.size() / 2] ^= 0x40;
    std::FILE* f = std::fopen((tmp / "corrupt.imx").c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    EXPECT_EQ(call(imx_main, {"verify", tmp / "corrupt.imx"}), 1);
  }
  EXPECT_NE(call(imx_main, {"build", "--image", kOpenCvData + "fruits.jpg", "-o", tmp / "no.imx"}), 0);
  EXPECT_FALSE(fs::exists(tmp / "no.imx"));

  // Speech as a WAV file (envelope lip sync): a rising-and-falling buzz with pauses.
  internal::Pcm pcm;
  pcm.sample_rate = 16000;
  for (int k = 0; k < 8; ++k) {
    for (int i = 0; i < 4000; ++i) {
      double env = std::sin(M_PI * i / 4000.0);
      pcm.samples.push_back(static_cast<int16_t>(12000 * env * std::sin(2 * M_PI * 150 * i / 16000.0)));
    }
    pcm.samples.insert(pcm.samples.end(), 2400 + 800 * (k % 3), 0);
  }
  std::string wav = tmp / "speech.wav";
  {
    std::string bytes = internal::encode_wav(pcm);
    std::FILE* f = std::fopen(wav.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  std::string mp4 = tmp / "speech.mp4";
  ASSERT_EQ(call(render_main, {model, "--audio", wav, "--size", "512x512", "-o", mp4}), 0);
  double audio_s = pcm.samples.size() / 16000.0;
  Probe p = probe(mp4);
  int64_t expect_frames = static_cast<int64_t>(std::ceil((audio_s + 0.4) * kFps - 1e-9));
  EXPECT_EQ(p.frames, expect_frames);
  EXPECT_NEAR(p.duration, expect_frames / 25.0, 0.06);
  EXPECT_EQ(p.width, 512);

  // Decode the file back and check that mouth and audio line up in it.
  std::string rgb = run("ffmpeg -v error -i '" + mp4 + "' -f rawvideo -pix_fmt rgb24 -");
  std::string pcm_out = run("ffmpeg -v error -i '" + mp4 + "' -f s16le -ac 1 -ar 24000 -");
  size_t frame_bytes = 512 * 512 * 3;
  ASSERT_EQ(rgb.size(), frame_bytes * expect_frames);
  auto m = load_model(slurp(model), 512, 512);
  ASSERT_TRUE(m.ok());
  const Manifest& man = (*m)->manifest();
  cv::Rect box(int(man.mouth.x - 0.7 * man.mouth_width), int(man.mouth.y - 0.35 * man.mouth_width),
               int(1.4 * man.mouth_width), int(1.0 * man.mouth_width));
  std::vector<double> open, env;
  const int16_t* s = reinterpret_cast<const int16_t*>(pcm_out.data());
  size_t ns = pcm_out.size() / 2;
  for (int64_t i = 0; i < expect_frames; ++i) {
    cv::Mat img(512, 512, CV_8UC3, rgb.data() + i * frame_bytes), gray;
    cv::cvtColor(img(box), gray, cv::COLOR_RGB2GRAY);
    open.push_back(cv::countNonZero(gray < 48));
    double e = 0;
    for (size_t k = i * 960; k < std::min(ns, size_t(i + 1) * 960); ++k) e += double(s[k]) * s[k];
    env.push_back(std::sqrt(e / 960));
  }
  double ma = 0, mb = 0;
  for (size_t i = 0; i < open.size(); ++i) ma += open[i], mb += env[i];
  ma /= open.size(), mb /= env.size();
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < open.size(); ++i)
    sab += (open[i] - ma) * (env[i] - mb), saa += (open[i] - ma) * (open[i] - ma),
        sbb += (env[i] - mb) * (env[i] - mb);
  double r = sab / std::sqrt(saa * sbb);
  std::printf("decoded MP4: mouth/audio r = %.3f\n", r);
  EXPECT_GE(r, 0.6) << "audio and mouth do not line up in the MP4";

  // A gesture clip from the CLI, and usage errors.
  std::string clip = tmp / "wave.mp4";
  ASSERT_EQ(call(render_main, {model, "--gesture", "mini_wave_hello", "--duration", "1.2", "-o", clip}), 0);
  EXPECT_EQ(probe(clip).frames, 30);
  EXPECT_NE(call(render_main, {model, "-o", tmp / "nothing.mp4"}), 0);
  EXPECT_NE(call(render_main, {model, "--text", "hi", "--audio", wav, "-o", tmp / "x.mp4"}), 0);
  EXPECT_NE(call(render_main, {model, "--bogus", "1", "-o", tmp / "x.mp4"}), 0);
  EXPECT_EQ(call(render_main, {"--help"}), 0);
  EXPECT_EQ(call(imx_main, {"--help"}), 0);
  EXPECT_EQ(call(imx_main, {"frobnicate"}), 2);
}

TEST(AvatarCommands, RendersTextThroughTheSpeechEngine) {
  TempDir tmp;
  std::string model = tmp / "m.imx";
  {
    const std::string& bytes = procedural_model("1:1", "expression");
    std::FILE* f = std::fopen(model.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  std::string mp4 = tmp / "text.mp4";
  ASSERT_EQ(call(render_main, {model, "--text", "Hello there, nice to meet you.", "--voice", "F2",
                               "--gesture", "mini_wave_hello", "-o", mp4}),
            0);
  Probe p = probe(mp4);
  EXPECT_EQ(p.vcodec, "h264");
  EXPECT_EQ(p.acodec, "aac");
  EXPECT_GT(p.duration, 1.0);
  EXPECT_NEAR(p.duration, p.frames / 25.0, 0.06);
}

}  // namespace
}  // namespace imago::avatar
