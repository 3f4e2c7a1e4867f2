// The speech service: the one entry point to text-to-speech for /v1/tts, /v1/audio/speech, the
// avatar renderer (`imagod render --text`) and live sessions.
//
// Each engine (RHVoice, flite, espeak-ng: speech/speech_engines.h) runs one synthesis at a time
// per process. The service admits requests to a SynthesisScheduler and runs `workers` threads; a
// worker takes one sentence of the request the scheduler picks (live rooms first, accounts in
// round robin), holds that request's engine only while it produces the sentence, then hands the
// request back, so requests interleave sentence by sentence, one account cannot starve the others
// (docs/speech.md, "Scheduling"), and requests on different engines run in parallel.
// Post-processing (time-stretch, resampling) runs on the thread reading the stream, overlapping
// the engine on the next sentence.
// Callers never run synthesis on an HTTP I/O thread: they block on the queue from a handler
// worker (or a stream producer) thread.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "speech/synthesis.h"
#include "speech/synthesis_scheduler.h"
#include "util/status.h"

namespace imago {
struct Config;
}

namespace imago::speech {

// Error code for 503 when the synthesis queue is full (SPEC 7 leaves the 503 code open).
inline constexpr const char* kBusyErrorCode = "TTS_BUSY";
// Seconds suggested in Retry-After with a 503 TTS_BUSY.
inline constexpr int kBusyRetryAfterS = 1;

struct SpeechOptions {
  int workers = 2;           // synthesis worker threads (>= 1)
  int queue = 64;            // requests that may wait for a worker before kUnavailable
  int account_queue = 8;     // requests one account may have admitted (live excepted), else 429
  int max_chars = 20000;     // longest accepted text (characters, UTF-8 code points)
  double max_audio_s = 600;  // longest audio one request may produce (after `speed`)
  std::string scratch_dir;   // where generated espeak voice variants go; empty: a temp dir
  // Hand the first sentence of a request to the reader in chunks as the engine makes them (word
  // boundaries, RHVoice), so the first audio comes after the first words rather than the whole
  // sentence. false: whole sentences only (first_audio_benchmark compares the two).
  bool chunk_first_sentence = true;
};
SpeechOptions speech_options_from_config(const Config& cfg);

// Engine-level limits (the HTTP routes may narrow them, e.g. /v1/tts speed 0.7..2.0).
inline constexpr double kAxisMin = -0.5;  // accepted axis offsets; suggested range is +-0.3
inline constexpr double kAxisMax = 0.5;
inline constexpr double kSpeedMin = 0.25;
inline constexpr double kSpeedMax = 4.0;
inline constexpr int kStepsMin = 1;
inline constexpr int kStepsMax = 100;

// One of the languages verified to synthesize on this server.
struct LanguageInfo {
  std::string code;          // ISO-639-1, e.g. "en", "zh"
  std::string espeak_voice;  // e.g. "en-us", "cmn"
  std::string name;          // English name, e.g. "Chinese (Mandarin)"
  // Set for languages that work only in part (e.g. Japanese: kana only), or with a caveat.
  std::string note;
  std::string engine;  // the engine that speaks it for the default voice: rhvoice, flite, espeak-ng
};

// A tuning axis as shown by GET /v1/studio/axes.
struct AxisInfo {
  std::string name;  // gender, pitch, rate, brightness
  std::string description;
  double suggested_min = -0.3;
  double suggested_max = 0.3;
  // Where each built-in voice sits on this axis, computed from its definition.
  std::vector<std::pair<std::string, double>> anchor_projections;
};

struct BuiltinVoiceInfo {
  std::string id;           // M1..M5, F1..F5
  std::string description;  // short human description
  std::string engine;       // the engine that speaks its English: rhvoice or flite
};

struct SpeechStats {
  int workers = 0;
  int queue_capacity = 0;
  int queued = 0;                // waiting for a worker
  int running = 0;               // being synthesized
  int64_t rejected_busy = 0;     // 503 TTS_BUSY: the server's queue was full
  int64_t rejected_account = 0;  // 429: the account held its share (account_queue)
};

// A synthesis admitted to the queue, read sentence by sentence. Destroying it cancels the rest.
class SpeechStream {
 public:
  virtual ~SpeechStream() = default;
  // Blocks until the next piece is ready: its audio, nullopt after the last one, or the error
  // that stopped synthesis (e.g. the audio cap). A piece is a sentence, or a chunk of the first
  // sentence (SpeechOptions::chunk_first_sentence): contiguous audio whose words and phones are
  // those of its span, timed from its own first sample.
  virtual Result<std::optional<Audio>> next() = 0;
};

class SpeechService {
 public:
  virtual ~SpeechService() = default;

  // Checks text and settings without synthesizing: empty/whitespace-only text, length, voice id,
  // axes range, language, speed, total_steps, output rate. kInvalidArgument with a message.
  virtual Status validate(const std::string& text, const VoiceSettings& settings) const = 0;

  // Synthesizes the whole text for `requester` (whose share and priority class it uses). Errors:
  // kInvalidArgument (bad input, or the audio would exceed max_audio_s), kUnavailable (queue
  // full: respond 503 kBusyErrorCode), kRateLimited (the account holds `account_queue` requests:
  // respond 429 with Retry-After), kInternal.
  virtual Result<Audio> synthesize(const std::string& text, const VoiceSettings& settings,
                                   const SynthesisRequester& requester) = 0;

  // Synthesizes sentence by sentence and calls `on_sentence` on the calling thread with each
  // piece's audio as soon as it is ready (a sentence, or a chunk of the first one, as
  // SpeechStream::next; timings relative to that piece's first sample),
  // while the next sentence is being synthesized. Returning false from `on_sentence` cancels the
  // rest. Queue-full is reported before any callback; a limit hit midway returns the error after
  // the sentences already delivered.
  virtual Status synthesize_stream(const std::string& text, const VoiceSettings& settings,
                                   const SynthesisRequester& requester,
                                   const std::function<bool(const Audio& sentence)>& on_sentence) = 0;

  // Validates and admits the request (kUnavailable / kRateLimited at once, as for synthesize), so
  // an HTTP handler can answer 503 or 429 before it commits to a streamed 200.
  virtual Result<std::unique_ptr<SpeechStream>> start(const std::string& text, const VoiceSettings& settings,
                                                      const SynthesisRequester& requester) = 0;

  // For tools and tests: the server's own share (empty account), interactive priority.
  Result<Audio> synthesize(const std::string& text, const VoiceSettings& settings) {
    return synthesize(text, settings, SynthesisRequester{});
  }
  Status synthesize_stream(const std::string& text, const VoiceSettings& settings,
                           const std::function<bool(const Audio& sentence)>& on_sentence) {
    return synthesize_stream(text, settings, SynthesisRequester{}, on_sentence);
  }

  virtual std::vector<BuiltinVoiceInfo> builtin_voices() const = 0;
  virtual bool is_builtin_voice(const std::string& id) const = 0;
  // Languages whose native sample sentence espeak-ng read correctly (phonemes checked against a
  // known reading, see speech/languages.h) and synthesized when the service started.
  virtual std::vector<LanguageInfo> languages() const = 0;
  virtual std::vector<AxisInfo> axes() const = 0;
  virtual SpeechStats stats() const = 0;
  virtual const SpeechOptions& options() const = 0;
};

// Opens the engines (once per process) and starts the workers. Fails when espeak-ng's data cannot
// be loaded; without RHVoice it logs which voices fall back to flite.
Result<std::unique_ptr<SpeechService>> make_speech_service(const SpeechOptions& options);

}  // namespace imago::speech
