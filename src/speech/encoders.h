// Audio containers and encoders for the speech routes: WAV, raw PCM, MP3 (libmp3lame), Ogg Opus
// (libopusenc), FLAC (libFLAC) and AAC in ADTS (libavcodec + libavformat). Every encoder is
// incremental so that streamed responses can send audio as it is produced.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago::speech {

enum class AudioFormat { kWav, kPcm, kMp3, kOpus, kAac, kFlac };

std::optional<AudioFormat> parse_audio_format(std::string_view name);  // "mp3", "opus", ...
std::string_view audio_format_name(AudioFormat f);
std::string_view audio_content_type(AudioFormat f);

// The 44-byte RIFF/WAVE header of mono s16le audio; `data_bytes` 0xFFFFFFFF marks an unknown
// (streamed) length, as most players accept.
std::string wav_header(int sample_rate, uint32_t data_bytes);

class Encoder {
 public:
  virtual ~Encoder() = default;
  // Feeds mono s16 samples; returns the bytes that are ready (possibly none).
  virtual Result<std::string> write(const int16_t* samples, size_t n) = 0;
  // Flushes everything; returns the remaining bytes. Call once, after the last write.
  virtual Result<std::string> finish() = 0;
};

// `streaming` encoders cannot go back to patch headers: WAV gets the unknown-length marker and
// FLAC's STREAMINFO keeps a zero total; otherwise the header carries the real sizes
// (`total_samples` must then be exact for WAV).
Result<std::unique_ptr<Encoder>> make_encoder(AudioFormat format, int sample_rate, bool streaming,
                                              size_t total_samples = 0);

// One-shot convenience: encodes all samples.
Result<std::string> encode_audio(AudioFormat format, int sample_rate, const int16_t* samples, size_t n);

}  // namespace imago::speech
