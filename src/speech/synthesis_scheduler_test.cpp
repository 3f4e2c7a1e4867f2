// The synthesis scheduler on abstract tasks (no espeak): slice order, priority classes, limits.
#include "speech/synthesis_scheduler.h"

#include <gtest/gtest.h>

#include <vector>

namespace imago::speech {
namespace {

struct Task : SynthesisTask {
  Task(std::string account, SynthesisPriority p, std::string name_, int slices_)
      : name(std::move(name_)), slices(slices_) {
    requester = {std::move(account), p};
  }
  std::string name;
  int slices;  // sentences left
};

// Runs every slice with one worker and returns the task names in slice order.
std::vector<std::string> run_all(SynthesisScheduler& s) {
  std::vector<std::string> order;
  while (auto t = s.next()) {
    auto& task = static_cast<Task&>(*t);
    order.push_back(task.name);
    if (--task.slices > 0) {
      s.requeue(t);
    } else {
      s.retire(task);
    }
  }
  return order;
}

std::shared_ptr<Task> task(std::string account, std::string name, int slices,
                           SynthesisPriority p = SynthesisPriority::kInteractive) {
  return std::make_shared<Task>(std::move(account), p, std::move(name), slices);
}

// One account's long requests, queued first, delay another account's one-sentence request by one
// slice, not by the whole backlog (with a FIFO of whole jobs it ran after 4 x 10 sentences).
TEST(SynthesisScheduler, AnotherAccountsShortRequestWaitsOneSliceBehindAFlood) {
  SynthesisScheduler s({100, 8});
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(s.admit(task("flood", "f" + std::to_string(i), 10)).ok());
  ASSERT_TRUE(s.admit(task("other", "short", 1)).ok());
  auto order = run_all(s);
  ASSERT_EQ(order.size(), 41u);
  EXPECT_EQ(order[0], "f0");
  EXPECT_EQ(order[1], "short");
  EXPECT_EQ(s.admitted(), 0);
  EXPECT_EQ(s.admitted_by("flood"), 0);
}

// Accounts alternate slice by slice; within an account its tasks take turns.
TEST(SynthesisScheduler, AccountsAreServedRoundRobinBySentence) {
  SynthesisScheduler s({100, 8});
  ASSERT_TRUE(s.admit(task("a", "a1", 2)).ok());
  ASSERT_TRUE(s.admit(task("a", "a2", 2)).ok());
  ASSERT_TRUE(s.admit(task("b", "b1", 3)).ok());
  EXPECT_EQ(run_all(s), (std::vector<std::string>{"a1", "b1", "a2", "b1", "a1", "b1", "a2"}));
}

// An account that becomes ready goes before the accounts already in the round: its first
// sentence waits for no full round of the busy accounts; afterwards it takes its turn.
TEST(SynthesisScheduler, AnAccountThatBecomesReadyGoesBeforeTheRound) {
  SynthesisScheduler s({100, 8});
  ASSERT_TRUE(s.admit(task("a", "a", 3)).ok());
  ASSERT_TRUE(s.admit(task("b", "b", 3)).ok());
  for (int i = 0; i < 2; ++i) {  // a and b have had a turn each: the round is a, b
    auto t = s.next();
    static_cast<Task&>(*t).slices--;
    s.requeue(t);
  }
  ASSERT_TRUE(s.admit(task("c", "c", 2)).ok());
  auto order = run_all(s);
  EXPECT_EQ(order, (std::vector<std::string>{"c", "a", "b", "c", "a", "b"}));
}

// Live speech goes before interactive requests, which go before batch renders, whatever the
// arrival order; a lower class runs when the higher ones have nothing ready.
TEST(SynthesisScheduler, HigherPriorityClassesGoFirst) {
  SynthesisScheduler s({100, 8});
  ASSERT_TRUE(s.admit(task("a", "batch", 2, SynthesisPriority::kBatch)).ok());
  ASSERT_TRUE(s.admit(task("b", "http", 2, SynthesisPriority::kInteractive)).ok());
  ASSERT_TRUE(s.admit(task("c", "live", 2, SynthesisPriority::kLive)).ok());
  EXPECT_EQ(run_all(s), (std::vector<std::string>{"live", "live", "http", "http", "batch", "batch"}));
}

// A task between two slices (being synthesized) is not ready: a live reply admitted meanwhile
// runs next, ahead of the rest of the running batch task.
TEST(SynthesisScheduler, ALiveReplyOvertakesARunningBatchTaskAtItsNextSentence) {
  SynthesisScheduler s({100, 8});
  ASSERT_TRUE(s.admit(task("a", "video", 5, SynthesisPriority::kBatch)).ok());
  auto running = s.next();
  ASSERT_TRUE(running);
  EXPECT_FALSE(s.has_ready());
  ASSERT_TRUE(s.admit(task("b", "live", 1, SynthesisPriority::kLive)).ok());
  s.requeue(running);
  auto n = s.next();
  ASSERT_TRUE(n);
  EXPECT_EQ(static_cast<Task&>(*n).name, "live");
}

// An account holding its share is refused with kRateLimited (429) while others are admitted;
// the server-wide capacity answers kUnavailable (503 TTS_BUSY). Live tasks skip the share.
TEST(SynthesisScheduler, AdmissionBoundsAnAccountAndTheServer) {
  SynthesisScheduler s({5, 2});
  ASSERT_TRUE(s.admit(task("a", "a1", 1)).ok());
  ASSERT_TRUE(s.admit(task("a", "a2", 1)).ok());
  EXPECT_EQ(s.admit(task("a", "a3", 1)).code(), Code::kRateLimited);
  EXPECT_EQ(s.admitted_by("a"), 2);
  ASSERT_TRUE(s.admit(task("a", "live", 1, SynthesisPriority::kLive)).ok());
  ASSERT_TRUE(s.admit(task("b", "b1", 1)).ok());
  ASSERT_TRUE(s.admit(task("c", "c1", 1)).ok());
  EXPECT_EQ(s.admit(task("d", "d1", 1)).code(), Code::kUnavailable);
  EXPECT_EQ(s.admitted(), 5);

  // Finishing one of a's tasks frees its share again.
  auto t = s.next();  // the live one
  s.retire(*t);
  t = s.next();
  ASSERT_EQ(static_cast<Task&>(*t).requester.account_id, "a");
  s.retire(*t);
  EXPECT_TRUE(s.admit(task("a", "a4", 1)).ok());
  EXPECT_EQ(s.ready(), 4);
}

}  // namespace
}  // namespace imago::speech
