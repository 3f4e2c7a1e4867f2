#include "conversation/recognizer.h"

#include <pocketsphinx.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace imago::conversation {

namespace {
// Model loading goes through sphinxbase's global logging and configuration code.
std::mutex& create_mutex() {
  static std::mutex mu;
  return mu;
}
}  // namespace

// Adds a constant low noise floor (about -60 dBFS, deterministic) to the audio. PocketSphinx's
// noise estimation and cepstral normalisation break down on digital silence (exact zeros, as in
// synthesized or gated audio): on TTS-spoken questions the word error rate drops from ~0.8 to
// ~0.2 with it. Real microphones always carry more noise than this, so it changes nothing there.
class Dither {
 public:
  void reset() { state_ = 0x9E3779B9u; }
  void apply(const int16_t* in, size_t n, std::vector<int16_t>& out) {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) {
      // Sum of four uniform values: close to Gaussian, sigma ~ 30.
      int noise = 0;
      for (int k = 0; k < 4; ++k) {
        state_ = state_ * 1664525u + 1013904223u;
        noise += static_cast<int>((state_ >> 16) % 104) - 52;
      }
      out[i] = static_cast<int16_t>(std::clamp(static_cast<int>(in[i]) + noise, -32768, 32767));
    }
  }

 private:
  uint32_t state_ = 0x9E3779B9u;
};

struct Recognizer::Impl {
  cmd_ln_t* config = nullptr;
  Dither dither;
  std::vector<int16_t> buf;
  ps_decoder_t* decoder = nullptr;
  ngram_model_t* general = nullptr;  // the default search's model, retained
  bool in_utterance = false;
  ~Impl() {
    if (decoder) ps_free(decoder);
    if (general) ngram_model_free(general);
    if (config) cmd_ln_free_r(config);
  }
};

Recognizer::Recognizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Recognizer::~Recognizer() = default;

Result<std::unique_ptr<Recognizer>> Recognizer::create(const RecognizerOptions& options) {
  namespace fs = std::filesystem;
  const std::string hmm = options.model_dir + "/en-us";
  const std::string lm = options.model_dir + "/en-us.lm.bin";
  const std::string dict = options.model_dir + "/cmudict-en-us.dict";
  for (const auto& p : {hmm, lm, dict}) {
    if (!fs::exists(p)) {
      return Status::Unavailable("speech recognition model missing: " + p +
                                 " (Debian package pocketsphinx-en-us)");
    }
  }
  std::lock_guard lock(create_mutex());
  auto impl = std::make_unique<Impl>();
  impl->config = cmd_ln_init(nullptr, ps_args(), TRUE, "-hmm", hmm.c_str(), "-lm", lm.c_str(), "-dict",
                             dict.c_str(), "-samprate", "16000", "-fwdflat", options.flat_pass ? "yes" : "no",
                             "-logfn", "/dev/null", nullptr);
  if (!impl->config) return Status::Internal("pocketsphinx rejected its configuration");
  impl->decoder = ps_init(impl->config);
  if (!impl->decoder)
    return Status::Internal("pocketsphinx could not load its models from " + options.model_dir);
  impl->general = ps_get_lm(impl->decoder, "_default");
  if (impl->general) ngram_model_retain(impl->general);
  return std::unique_ptr<Recognizer>(new Recognizer(std::move(impl)));
}

Status Recognizer::start() {
  if (impl_->in_utterance) ps_end_utt(impl_->decoder);
  if (ps_start_utt(impl_->decoder) < 0) return Status::Internal("pocketsphinx could not start an utterance");
  impl_->dither.reset();
  impl_->in_utterance = true;
  return Status::Ok();
}

Status Recognizer::feed(const int16_t* samples, size_t n) {
  if (!impl_->in_utterance) return Status::Internal("feed before start");
  if (n == 0) return Status::Ok();
  impl_->dither.apply(samples, n, impl_->buf);
  if (ps_process_raw(impl_->decoder, impl_->buf.data(), n, FALSE, FALSE) < 0) {
    return Status::Internal("pocketsphinx failed to process audio");
  }
  return Status::Ok();
}

Result<std::string> Recognizer::finish() {
  if (!impl_->in_utterance) return Status::Internal("finish before start");
  impl_->in_utterance = false;
  if (ps_end_utt(impl_->decoder) < 0) return Status::Internal("pocketsphinx could not end the utterance");
  int32 score = 0;
  const char* hyp = ps_get_hyp(impl_->decoder, &score);
  return std::string(hyp ? hyp : "");
}

std::string Recognizer::partial() const {
  if (!impl_->in_utterance) return "";
  int32 score = 0;
  const char* hyp = ps_get_hyp(impl_->decoder, &score);
  return hyp ? hyp : "";
}

Result<std::string> Recognizer::recognize(const std::vector<int16_t>& pcm16k) {
  Status s = start();
  if (!s.ok()) return s;
  // The whole utterance at once: cepstral mean normalisation is computed over all of it instead
  // of being estimated as the audio streams in, which matters for short questions.
  impl_->dither.apply(pcm16k.data(), pcm16k.size(), impl_->buf);
  if (!pcm16k.empty() && ps_process_raw(impl_->decoder, impl_->buf.data(), pcm16k.size(), FALSE, TRUE) < 0) {
    impl_->in_utterance = false;
    ps_end_utt(impl_->decoder);
    return Status::Internal("pocketsphinx failed to process audio");
  }
  return finish();
}

namespace {

// Words every conversation uses, so questions can be recognised around the domain's words.
const char* const kConversationWords[] = {
    "what",      "when",    "where",  "who",    "why",   "how",   "which", "is",    "are",    "was",
    "were",      "do",      "does",   "did",    "can",   "could", "would", "will",  "should", "may",
    "i",         "you",     "we",     "they",   "it",    "he",    "she",   "my",    "your",   "our",
    "their",     "the",     "a",      "an",     "this",  "that",  "there", "here",  "of",     "in",
    "on",        "at",      "to",     "for",    "from",  "with",  "about", "and",   "or",     "not",
    "no",        "yes",     "please", "thanks", "thank", "hello", "hi",    "bye",   "much",   "many",
    "time",      "open",    "close",  "get",    "go",    "have",  "has",   "need",  "want",   "know",
    "tell",      "me",      "us",     "any",    "some",  "much",  "long",  "early", "late",   "today",
    "tomorrow",  "now",     "take",   "bring",  "see",   "find",  "help",  "name",  "good",   "morning",
    "afternoon", "evening", "day",    "again",  "more",  "cost",  "price", "free",  "be",     "if",
    "so",        "just",    "also",   "okay",   "right", "left",  "near",  "next",  "first",  "last",
    "one",       "two",     "three",  "four",   "five",  "six",   "seven", "eight", "nine",   "ten"};

std::vector<std::string> lm_words(const std::string& sentence) {
  std::vector<std::string> out;
  for (auto& w : wer_words(sentence)) {
    // Digits and other scripts are not in the pronunciation dictionary.
    bool ok = std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'a' && c <= 'z') || c == '\''; });
    if (ok && w.front() != '\'') out.push_back(w);
  }
  return out;
}

}  // namespace

std::string domain_arpa(const std::vector<std::string>& sentences) {
  constexpr double D = 0.5;
  std::map<std::string, double> uni;  // counts, including <s> and </s>
  std::map<std::string, std::map<std::string, double>> bi;
  for (const char* w : kConversationWords) uni[w] += 0;
  for (const auto& s : sentences) {
    auto words = lm_words(s);
    if (words.empty()) continue;
    std::string prev = "<s>";
    uni["<s>"] += 1;
    words.push_back("</s>");
    for (const auto& w : words) {
      uni[w] += 1;
      bi[prev][w] += 1;
      prev = w;
    }
  }
  uni["<s>"] += 0;
  uni["</s>"] += 0;
  double total = 0;
  for (auto& [w, c] : uni) total += c + 1;
  std::map<std::string, double> p_uni;
  for (auto& [w, c] : uni) p_uni[w] = (c + 1) / total;
  std::ostringstream out;
  size_t n_bi = 0;
  for (auto& [w, m] : bi) n_bi += m.size();
  out << "\\data\\\nngram 1=" << uni.size() << "\nngram 2=" << n_bi << "\n\n\\1-grams:\n";
  char line[512];
  for (auto& [w, c] : uni) {
    double backoff = 0;
    auto it = bi.find(w);
    if (it != bi.end()) {
      double cw = 0, seen_uni = 0;
      for (auto& [w2, n] : it->second) {
        cw += n;
        seen_uni += p_uni[w2];
      }
      double left = D * static_cast<double>(it->second.size()) / cw;
      backoff = std::log10(left / std::max(1e-9, 1.0 - seen_uni));
    }
    double lp = w == "<s>" ? -99.0 : std::log10(p_uni[w]);
    std::snprintf(line, sizeof line, "%.5f %s %.5f\n", lp, w.c_str(), backoff);
    out << line;
  }
  out << "\n\\2-grams:\n";
  for (auto& [w1, m] : bi) {
    double cw = 0;
    for (auto& [w2, n] : m) cw += n;
    for (auto& [w2, n] : m) {
      std::snprintf(line, sizeof line, "%.5f %s %s\n", std::log10((n - D) / cw), w1.c_str(), w2.c_str());
      out << line;
    }
  }
  out << "\n\\end\\\n";
  return out.str();
}

Status Recognizer::set_domain(const std::vector<std::string>& sentences, double domain_weight) {
  if (impl_->in_utterance) return Status::Internal("set_domain during an utterance");
  bool any = false;
  for (const auto& s : sentences) any = any || !lm_words(s).empty();
  if (!any) {
    if (ps_set_search(impl_->decoder, "_default") < 0)
      return Status::Internal("cannot restore the general model");
    return Status::Ok();
  }
  if (!impl_->general) return Status::Internal("the general language model is not available");
  // ngram_model_read wants a file.
  char path[] = "/tmp/imago-domain-lm-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return Status::Internal("cannot create a temporary language model file");
  close(fd);
  {
    std::ofstream f(path, std::ios::binary);
    f << domain_arpa(sentences);
  }
  logmath_t* lmath = ps_get_logmath(impl_->decoder);
  ngram_model_t* domain = ngram_model_read(impl_->config, path, NGRAM_ARPA, logmath_retain(lmath));
  std::remove(path);
  if (!domain) return Status::Internal("pocketsphinx could not read the domain language model");
  if (domain_weight >= 0.999) {
    // The agent's vocabulary alone.
    int rc = ps_set_lm(impl_->decoder, "domain", domain);
    ngram_model_free(domain);  // the search retained it (or failed): our reference goes
    if (rc < 0 || ps_set_search(impl_->decoder, "domain") < 0) {
      return Status::Internal("pocketsphinx could not use the domain language model");
    }
    return Status::Ok();
  }
  ngram_model_t* models[2] = {domain, impl_->general};  // the set retains both
  char name_domain[] = "domain";
  char name_general[] = "general";
  char* names[2] = {name_domain, name_general};
  const float32 weights[2] = {static_cast<float32>(domain_weight), static_cast<float32>(1.0 - domain_weight)};
  ngram_model_t* set = ngram_model_set_init(impl_->config, models, names, weights, 2);
  ngram_model_free(domain);  // the set holds it now (or failed)
  if (!set) {
    return Status::Internal("pocketsphinx could not combine the language models");
  }
  // The new search retains `set` and replaces, and frees, a previous "domain" search; our
  // reference goes, or every set (with the domain model and a reference to the general one) leaked,
  // ~70 MB per recogniser that set a domain.
  int rc = ps_set_lm(impl_->decoder, "domain", set);
  ngram_model_free(set);
  if (rc < 0 || ps_set_search(impl_->decoder, "domain") < 0) {
    return Status::Internal("pocketsphinx could not use the domain language model");
  }
  return Status::Ok();
}

std::vector<std::string> wer_words(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '\'' || c >= 0x80) {
      cur += static_cast<char>(std::tolower(c));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

double word_error_rate(const std::string& reference, const std::string& hypothesis) {
  auto r = wer_words(reference);
  auto h = wer_words(hypothesis);
  if (r.empty()) return h.empty() ? 0.0 : 1.0;
  std::vector<size_t> prev(h.size() + 1), cur(h.size() + 1);
  for (size_t j = 0; j <= h.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= r.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= h.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return static_cast<double>(prev[h.size()]) / static_cast<double>(r.size());
}

}  // namespace imago::conversation
