// Every output format decodes with ffprobe to the duration that was encoded.
#include "speech/encoders.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "speech/test_speech.h"

namespace imago::speech {
namespace {

double ffprobe_duration(const std::string& bytes, const std::string& ext, const std::string& extra = "") {
  auto path =
      std::filesystem::temp_directory_path() / ("imago-enc-" + std::to_string(::getpid()) + "." + ext);
  {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Decoding the whole file (not trusting a header) gives the real duration.
  std::string cmd =
      "ffmpeg -v error " + extra + " -i " + path.string() + " -f s16le -ac 1 -ar 24000 - 2>/dev/null | wc -c";
  FILE* p = popen(cmd.c_str(), "r");
  long bytes_out = -1;
  if (p) {
    if (std::fscanf(p, "%ld", &bytes_out) != 1) bytes_out = -1;
    pclose(p);
  }
  std::filesystem::remove(path);
  return bytes_out < 0 ? -1 : bytes_out / 2.0 / 24000.0;
}

const Audio& sample_audio() {
  static Audio a = [] {
    VoiceSettings s;
    s.output_rate = 24000;
    auto r = test_service().synthesize("Encoders must keep every sample of this sentence.", s);
    if (!r.ok()) throw std::runtime_error(r.status().message());
    return *r;
  }();
  return a;
}

class Formats : public ::testing::TestWithParam<std::pair<AudioFormat, bool>> {};

TEST_P(Formats, DecodesToTheEncodedDuration) {
  auto [fmt, streaming] = GetParam();
  const Audio& a = sample_audio();
  std::string bytes;
  auto enc = make_encoder(fmt, a.sample_rate, streaming, a.samples.size());
  ASSERT_TRUE(enc.ok()) << enc.status().message();
  // Feed in uneven chunks, as sentences arrive.
  size_t off = 0, chunk = 3001;
  while (off < a.samples.size()) {
    size_t n = std::min(chunk, a.samples.size() - off);
    auto b = (*enc)->write(a.samples.data() + off, n);
    ASSERT_TRUE(b.ok());
    bytes += *b;
    off += n;
    chunk = chunk * 2 + 17;
  }
  auto tail = (*enc)->finish();
  ASSERT_TRUE(tail.ok());
  bytes += *tail;
  std::string ext(audio_format_name(fmt));
  std::string extra = fmt == AudioFormat::kPcm ? "-f s16le -ar 24000 -ac 1" : "";
  if (fmt == AudioFormat::kAac) ext = "aac";
  if (fmt == AudioFormat::kOpus) ext = "ogg";
  double d = ffprobe_duration(bytes, ext, extra);
  // AAC and streamed MP3 decode with their encoder delay and last-frame padding (raw ADTS and
  // tag-less MP3 cannot signal them): up to about three 24 ms MP3 / two 43 ms AAC frames. A whole
  // MP3 carries the LAME tag and, like the other formats, decodes to the exact length.
  bool framed = (fmt == AudioFormat::kMp3 && streaming) || fmt == AudioFormat::kAac;
  EXPECT_NEAR(d, a.duration_s() + (framed ? 0.05 : 0), framed ? 0.05 : 0.025)
      << audio_format_name(fmt) << (streaming ? " streaming" : "");
}

INSTANTIATE_TEST_SUITE_P(
    All, Formats,
    ::testing::Values(std::pair{AudioFormat::kWav, false}, std::pair{AudioFormat::kWav, true},
                      std::pair{AudioFormat::kPcm, false}, std::pair{AudioFormat::kMp3, false},
                      std::pair{AudioFormat::kMp3, true}, std::pair{AudioFormat::kOpus, true},
                      std::pair{AudioFormat::kAac, false}, std::pair{AudioFormat::kAac, true},
                      std::pair{AudioFormat::kFlac, false}, std::pair{AudioFormat::kFlac, true}));

TEST(Wav, HeaderCarriesRealSizes) {
  int16_t s[100] = {};
  auto w = encode_audio(AudioFormat::kWav, 22050, s, 100);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->size(), 44u + 200u);
  auto u32 = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>((*w)[i])) |
           static_cast<uint32_t>(static_cast<unsigned char>((*w)[i + 1])) << 8 |
           static_cast<uint32_t>(static_cast<unsigned char>((*w)[i + 2])) << 16 |
           static_cast<uint32_t>(static_cast<unsigned char>((*w)[i + 3])) << 24;
  };
  EXPECT_EQ(w->substr(0, 4), "RIFF");
  EXPECT_EQ(u32(4), 236u);
  EXPECT_EQ(u32(24), 22050u);
  EXPECT_EQ(u32(40), 200u);
}

}  // namespace
}  // namespace imago::speech
