// Chunked delivery (EngineRequest::on_chunk) by the engines that make audio incrementally
// (RHVoice, flite): the first words of a sentence are handed on while the engine makes the rest,
// each chunk with the words and phones of its own span.
#include <gtest/gtest.h>

#include <cmath>

#include "speech/speech_engines.h"

namespace imago::speech {
namespace {

constexpr const char* kSentence = "Sure, I can help you with that order right away, and then we can talk.";

const SpeechEngines& engines() {
  static const SpeechEngines e = [] {
    auto r = open_speech_engines("");
    if (!r.ok()) throw std::runtime_error(r.status().message());
    return std::move(r.value());
  }();
  return e;
}

// The request `voice` makes for English, and the engine that makes it.
std::pair<SpeechEngine*, EngineRequest> request_for(const char* voice) {
  EngineChoice c = choose_engine(engines(), *find_builtin_voice(voice), "en");
  return {c.engine, EngineRequest{kSentence, "en-us", c.definition, 0, c.engine_voice}};
}

Result<EngineResult> run(SpeechEngine& engine, const EngineRequest& req) {
  std::lock_guard lock(engine.mutex());
  return engine.synthesize(req);
}

void expect_chunks_match_whole(const char* voice, const char* engine_name) {
  auto [engine, whole_req] = request_for(voice);
  if (std::string(engine->name()) != engine_name) GTEST_SKIP() << voice << " is on " << engine->name();
  auto whole = run(*engine, whole_req);
  ASSERT_TRUE(whole.ok());

  EngineRequest req = whole_req;
  std::vector<Audio> pieces;
  req.on_chunk = [&](Audio a) {
    pieces.push_back(std::move(a));
    return true;
  };
  auto rest = run(*engine, req);
  ASSERT_TRUE(rest.ok());
  ASSERT_FALSE(rest->truncated);
  // The old engines made the whole sentence first: no chunk at all.
  ASSERT_GE(pieces.size(), 1u);
  pieces.push_back(rest->audio);

  // The first chunk is short (the first words), well before the sentence ends.
  EXPECT_LT(pieces.front().duration_s(), whole->audio.duration_s() / 2);
  double total = 0;
  std::vector<std::string> words;
  std::vector<int16_t> joined;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Audio& p = pieces[i];
    EXPECT_EQ(p.continues, i + 1 < pieces.size());  // every chunk but the rest continues
    joined.insert(joined.end(), p.samples.begin(), p.samples.end());
    EXPECT_EQ(p.sample_rate, whole->audio.sample_rate);
    ASSERT_FALSE(p.words.empty());  // a chunk is cut only where another word has begun
    ASSERT_FALSE(p.phonemes.empty());
    // Each chunk carries the phones of its own span, timed from its own first sample.
    for (const auto& ph : p.phonemes) {
      EXPECT_GE(ph.start_s, 0);
      EXPECT_LE(ph.end_s, p.duration_s() + 1e-6);
      EXPECT_LE(ph.start_s, ph.end_s);
    }
    for (const auto& w : p.words) words.push_back(w.text);
    total += p.duration_s();
  }
  // Nothing lost or repeated at the seams: the same words and (resampling rounds each piece) the
  // same length to within a few samples per piece.
  std::vector<std::string> whole_words;
  for (const auto& w : whole->audio.words) whole_words.push_back(w.text);
  EXPECT_EQ(words, whole_words);
  EXPECT_NEAR(total, whole->audio.duration_s(), 0.002 * pieces.size());
  // No seam: post-processing streams across the cuts, so the joined chunks are the whole
  // sentence's signal (the engine itself may differ by a few samples from run to run, and the
  // tilt's level is set on the first chunk, so compare shape: normalised correlation).
  const size_t n = std::min(joined.size(), whole->audio.samples.size());
  double xy = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = joined[i], y = whole->audio.samples[i];
    xy += x * y, xx += x * x, yy += y * y;
  }
  EXPECT_GT(xy / std::sqrt(xx * yy + 1e-9), 0.98);
}

void expect_stop_when_reader_says_so(const char* voice, const char* engine_name) {
  auto [engine, req] = request_for(voice);
  if (std::string(engine->name()) != engine_name) GTEST_SKIP() << voice << " is on " << engine->name();
  int calls = 0;
  req.on_chunk = [&](Audio) { return ++calls < 1; };
  auto r = run(*engine, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(r->truncated);
  EXPECT_TRUE(r->audio.samples.empty());
}

TEST(Speech, RhvoiceHandsOnTheFirstWordsBeforeTheSentenceEnds) {
  expect_chunks_match_whole("M1", "rhvoice");
}
// Without a pause after its first word, the first chunk is still that word alone (cut inside sound:
// "Hello" runs into "there"; cutting only in a pause, as before, waited for more words).
TEST(Speech, RhvoiceHandsOnTheFirstWordsOfASentenceWithoutAPause) {
  auto [engine, req] = request_for("M1");
  if (std::string(engine->name()) != "rhvoice") GTEST_SKIP() << "M1 is on " << engine->name();
  req.text = "Hello there how can I help you with your order today";
  std::vector<Audio> pieces;
  req.on_chunk = [&](Audio a) {
    pieces.push_back(std::move(a));
    return true;
  };
  auto rest = run(*engine, req);
  ASSERT_TRUE(rest.ok());
  ASSERT_GE(pieces.size(), 1u);
  ASSERT_EQ(pieces.front().words.size(), 1u) << "the first chunk: \"" << pieces.front().words.front().text
                                             << " .. " << pieces.front().words.back().text << "\"";
  EXPECT_LT(pieces.front().duration_s(), 0.8);
}
TEST(Speech, RhvoiceStopsWhenTheChunkReaderSaysSo) {
  expect_stop_when_reader_says_so("M1", "rhvoice");
}
TEST(Speech, FliteHandsOnTheFirstWordsBeforeTheSentenceEnds) {
  expect_chunks_match_whole("M2", "flite");
}
TEST(Speech, FliteStopsWhenTheChunkReaderSaysSo) {
  expect_stop_when_reader_says_so("M2", "flite");
}

}  // namespace
}  // namespace imago::speech
