// RHVoice's chunked delivery (EngineRequest::on_chunk): the first words of a sentence are handed
// on while the engine makes the rest, each chunk with the words and phones of its own span.
#include "speech/rhvoice_engine.h"

#include <gtest/gtest.h>

#include "speech/speech_engines.h"

namespace imago::speech {
namespace {

constexpr const char* kSentence = "Sure, I can help you with that order right away, and then we can talk.";

struct Chunked {
  std::vector<Audio> pieces;  // the chunks, then the rest of the sentence
};

// The request M1 makes (RHVoice bdl), on the process's engines.
EngineRequest m1_request(const SpeechEngines& e) {
  EngineChoice c = choose_engine(e, *find_builtin_voice("M1"), "en");
  return EngineRequest{kSentence, "en-us", c.definition, 0, c.engine_voice};
}

TEST(Speech, RhvoiceHandsOnTheFirstWordsBeforeTheSentenceEnds) {
  auto engines = open_speech_engines("");
  ASSERT_TRUE(engines.ok()) << engines.status().message();
  if (!engines->rhvoice) GTEST_SKIP() << "built without RHVoice: " << engines->rhvoice_missing;
  SpeechEngine& rh = *engines->rhvoice;

  EngineRequest whole_req = m1_request(*engines);
  Result<EngineResult> whole = Status::Internal("not run");
  {
    std::lock_guard lock(rh.mutex());
    whole = rh.synthesize(whole_req);
  }
  ASSERT_TRUE(whole.ok());

  EngineRequest req = m1_request(*engines);
  Chunked got;
  req.on_chunk = [&](Audio a) {
    got.pieces.push_back(std::move(a));
    return true;
  };
  Result<EngineResult> rest = Status::Internal("not run");
  {
    std::lock_guard lock(rh.mutex());
    rest = rh.synthesize(req);
  }
  ASSERT_TRUE(rest.ok());
  ASSERT_FALSE(rest->truncated);
  // The old engine made the whole sentence first: no chunk at all.
  ASSERT_GE(got.pieces.size(), 1u);
  got.pieces.push_back(rest->audio);

  // The first chunk is short (the first words), well before the sentence ends.
  EXPECT_LT(got.pieces.front().duration_s(), whole->audio.duration_s() / 2);
  double total = 0;
  std::vector<std::string> words;
  for (const auto& p : got.pieces) {
    EXPECT_EQ(p.sample_rate, kEngineSampleRate);
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
  EXPECT_NEAR(total, whole->audio.duration_s(), 0.002 * got.pieces.size());
}

TEST(Speech, RhvoiceStopsWhenTheChunkReaderSaysSo) {
  auto engines = open_speech_engines("");
  ASSERT_TRUE(engines.ok()) << engines.status().message();
  if (!engines->rhvoice) GTEST_SKIP() << "built without RHVoice: " << engines->rhvoice_missing;
  SpeechEngine& rh = *engines->rhvoice;
  EngineRequest req = m1_request(*engines);
  int calls = 0;
  req.on_chunk = [&](Audio) { return ++calls < 1; };
  Result<EngineResult> r = Status::Internal("not run");
  {
    std::lock_guard lock(rh.mutex());
    r = rh.synthesize(req);
  }
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(r->truncated);
  EXPECT_TRUE(r->audio.samples.empty());
}

}  // namespace
}  // namespace imago::speech
