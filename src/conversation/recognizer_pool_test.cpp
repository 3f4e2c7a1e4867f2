#include "conversation/recognizer_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "speech/test_speech.h"

namespace imago::conversation {
namespace {

// Polls `ready` until it holds; a generous bound only so a broken pool fails instead of hanging.
bool eventually(const std::function<bool()>& ready) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string heard(Recognizer& r, const std::string& text) {
  speech::VoiceSettings v;
  v.voice = "M1";
  v.output_rate = kRecognizerSampleRate;
  auto a = speech::test_service().synthesize(text, v);
  if (!a.ok()) return "tts error: " + a.status().message();
  auto t = r.recognize(a->samples);
  return t.ok() ? t.value() : "error: " + t.status().message();
}

TEST(RecognizerPool, NothingIsLoadedBeforeItIsAskedFor) {
  RecognizerPool pool;
  // A pool that loaded at construction would have begun within this time.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pool.loads(), 0u);
  pool.warm();
  EXPECT_TRUE(eventually([&] { return pool.loads() == 1; }));
}

TEST(RecognizerPool, WarmLoadsASpareThatTakeHandsOverAndReplaces) {
  RecognizerPool pool;
  pool.warm();
  ASSERT_TRUE(eventually([&] { return pool.ready() == 1; }));
  pool.warm();  // already warm: no second spare
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pool.loads(), 1u);
  auto r = pool.take();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(heard(**r, "What time does the museum open?").find("museum"), std::string::npos);
  // The taken spare is replaced in the background.
  EXPECT_TRUE(eventually([&] { return pool.ready() == 1; }));
  EXPECT_EQ(pool.loads(), 2u);
}

TEST(RecognizerPool, TakeWithoutWarmLoadsOneAndConcurrentTakersGetTheirOwn) {
  RecognizerPool pool;
  std::vector<std::unique_ptr<Recognizer>> got(3);
  std::vector<std::thread> takers;
  for (auto& g : got) {
    takers.emplace_back([&pool, &g] {
      auto r = pool.take();
      if (r.ok()) g = std::move(r).value();
    });
  }
  for (auto& t : takers) t.join();
  std::set<Recognizer*> distinct;
  for (auto& g : got) {
    ASSERT_NE(g, nullptr);
    distinct.insert(g.get());
  }
  EXPECT_EQ(distinct.size(), 3u);
}

TEST(RecognizerPool, MissingModelsAreReportedToEveryTakerWithoutRetrying) {
  RecognizerOptions o;
  o.model_dir = "/nonexistent/pocketsphinx";
  RecognizerPool pool(o);
  pool.warm();
  for (int i = 0; i < 3; ++i) {
    auto r = pool.take();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kUnavailable);
    EXPECT_NE(r.status().message().find("pocketsphinx-en-us"), std::string::npos);
  }
  EXPECT_EQ(pool.ready(), 0u);
  EXPECT_EQ(pool.loads(), 1u) << "a failure is remembered, not retried";
}

TEST(RecognizerPool, NoSparesMeansEveryTakeLoadsItsOwn) {
  RecognizerPool pool({}, 0);
  pool.warm();
  auto r = pool.take();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(pool.ready(), 0u);
}

TEST(RecognizerPool, DestroyedWhileWarmingNeitherCrashesNorHangs) {
  // At once (the loader may not have started) and 100 ms in (a load is usually running: it takes
  // a few hundred ms). The destructor waits for the load; a loader outliving the pool would crash.
  for (int delay_ms : {0, 100}) {
    RecognizerPool pool;
    pool.warm();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
}

}  // namespace
}  // namespace imago::conversation
