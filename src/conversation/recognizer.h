// The ears: speech recognition on the CPU with CMU PocketSphinx (Debian's libpocketsphinx,
// 0.8+5prealpha) and its US English acoustic model, language model and dictionary
// (pocketsphinx-en-us). English only. Input is 16 kHz 16-bit mono PCM, the microphone framing of
// live sessions. One Recognizer decodes one utterance at a time; a session keeps its own (a
// decoder holds the models: about 91 MB resident, ~0.3 s of CPU to load; recognizer_pool.h loads
// them ahead of need).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago::conversation {

inline constexpr int kRecognizerSampleRate = 16000;
inline constexpr const char* kDefaultModelDir = "/usr/share/pocketsphinx/model/en-us";

struct RecognizerOptions {
  std::string model_dir = kDefaultModelDir;  // holds en-us/, en-us.lm.bin, cmudict-en-us.dict
  // PocketSphinx's flat-lexicon second pass, which re-decodes the whole utterance when it ends.
  // Off: it costs ~150 ms of CPU at every end of turn (finish() 190 -> 23 ms p50) and ~50 % more
  // CPU while the viewer speaks, for no better word error rate on the twenty test questions
  // (0.35 with it, 0.34 without; docs/conversation.md, "Latency over the WebSocket").
  bool flat_pass = false;
};

class Recognizer {
 public:
  // Loads the models (~0.3 s of CPU on an idle core). kUnavailable when the model files are missing.
  static Result<std::unique_ptr<Recognizer>> create(const RecognizerOptions& options = {});
  ~Recognizer();
  Recognizer(const Recognizer&) = delete;
  Recognizer& operator=(const Recognizer&) = delete;

  // Incremental use: start, feed audio as it arrives, finish to get the text.
  Status start();
  Status feed(const int16_t* samples, size_t n);
  // The recognised text, lower case ("" when nothing was understood).
  Result<std::string> finish();
  // The best hypothesis so far in the running utterance (lower case, "" when none yet): cheap, a
  // backtrace over what has been decoded, for deciding that a turn has ended.
  std::string partial() const;

  // One whole utterance.
  Result<std::string> recognize(const std::vector<int16_t>& pcm16k);

  // Listens for the agent's own vocabulary: builds a bigram language model from `sentences` (the
  // system prompt and injected knowledge) plus common conversational words, and interpolates it
  // with the general English model (`domain_weight` for the domain model). Questions about what
  // the agent knows are recognised far better; others still use the general model. An empty
  // list returns to the general model alone. Call between utterances.
  Status set_domain(const std::vector<std::string>& sentences, double domain_weight = kDefaultDomainWeight);
  static constexpr double kDefaultDomainWeight = 0.85;

 private:
  struct Impl;
  explicit Recognizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The ARPA text of the domain model set_domain() builds (exposed for tests): unigrams and
// bigrams with absolute discounting (D = 0.5) and back-off to add-one unigrams over the
// sentences' words plus a list of common conversational words.
std::string domain_arpa(const std::vector<std::string>& sentences);

// Word error rate of `hypothesis` against `reference`: (substitutions + deletions + insertions) /
// reference words, on lower-case words without punctuation.
double word_error_rate(const std::string& reference, const std::string& hypothesis);
// The words WER is computed on (lower case, punctuation removed).
std::vector<std::string> wer_words(const std::string& text);

}  // namespace imago::conversation
