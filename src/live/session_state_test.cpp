#include "live/session_state.h"

#include <gtest/gtest.h>

#include "billing/spend_cap.h"

namespace imago::live {
namespace {

using A = SessionAction;
using K = SessionAction::Kind;
constexpr int64_t S = 1'000'000;  // one second in microseconds
constexpr int64_t T0 = 1'700'000'000 * S;

SessionTimeouts timeouts() {
  SessionTimeouts t;
  t.absent_us = 300 * S;
  t.left_us = 60 * S;
  t.idle_us = 120 * S;
  t.max_duration_us = 3600 * S;
  t.grace_us = 300 * S;
  t.billing_period_us = 60 * S;
  return t;
}

// A session started at T0 with one viewer, active, minute 0 paid.
SessionState started() {
  SessionState s(timeouts(), T0);
  s.viewer_joined(T0);
  s.activate(T0);
  auto a = s.tick(T0);
  EXPECT_EQ(a, (std::vector<A>{{K::kChargeMinute, 0}}));
  s.minute_paid(0);
  return s;
}

// Keeps the session alive (speech + renewals) while stepping to `until`, paying every minute.
std::vector<A> run(SessionState& s, int64_t from, int64_t until, int64_t step = S, bool renew = true,
                   bool speak = true) {
  std::vector<A> all;
  for (int64_t t = from; t <= until; t += step) {
    if (speak) s.activity(t);
    if (renew) s.renewed(t);
    for (const A& a : s.tick(t)) {
      all.push_back(a);
      if (a.kind == K::kChargeMinute) s.minute_paid(a.minute);
    }
  }
  return all;
}

TEST(SessionState, FirstMinuteIsChargedAtActivationThenEachStartedMinute) {
  SessionState s = started();
  EXPECT_EQ(s.phase(), SessionPhase::kActive);
  EXPECT_TRUE(s.tick(T0 + 59 * S).empty());
  EXPECT_EQ(s.tick(T0 + 60 * S), (std::vector<A>{{K::kChargeMinute, 1}}));
  // Not asked again while the outcome is outstanding.
  EXPECT_TRUE(s.tick(T0 + 61 * S).empty());
  s.minute_paid(1);
  EXPECT_EQ(s.billed_minutes(), 2);
  s.activity(T0 + 100 * S);  // else the idle timeout (120 s) ends it first
  EXPECT_TRUE(s.tick(T0 + 119 * S).empty());
  EXPECT_EQ(s.tick(T0 + 120 * S), (std::vector<A>{{K::kChargeMinute, 2}}));
}

TEST(SessionState, NothingIsChargedBeforeActivation) {
  SessionState s(timeouts(), T0);
  s.viewer_joined(T0);
  EXPECT_TRUE(s.tick(T0 + 10 * S).empty());
  EXPECT_EQ(s.phase(), SessionPhase::kStarting);
  s.activate(T0 + 11 * S);
  EXPECT_EQ(s.tick(T0 + 11 * S), (std::vector<A>{{K::kChargeMinute, 0}}));
}

TEST(SessionState, RefusedMinuteEndsWithTheGivenReason) {
  SessionState s = started();
  auto a = s.tick(T0 + 60 * S);
  ASSERT_EQ(a.size(), 1u);
  s.minute_refused(1, EndReason::kInsufficientBalance);
  EXPECT_EQ(s.phase(), SessionPhase::kEnded);
  EXPECT_EQ(s.tick(T0 + 61 * S), (std::vector<A>{{K::kEnd, 0, EndReason::kInsufficientBalance}}));
  EXPECT_TRUE(s.tick(T0 + 62 * S).empty());  // reported once
  EXPECT_EQ(s.billed_minutes(), 1);
}

// The monthly live spend cap, as the ledger applies it: 2 credits a minute under a cap of 5 pays
// minutes 0 and 1 (4 credits) and refuses minute 2 (it would make 6). The session ends at the
// start of minute 2 with insufficient_balance and detail spend_cap; minute 2 is not billed.
TEST(SessionState, SpendCapEndsTheSessionBeforeTheMinuteThatWouldExceedIt) {
  const billing::LiveSpendCap cap{5, std::nullopt};
  constexpr int64_t kRate = 2;
  int64_t spent = 0;
  SessionState s(timeouts(), T0);
  s.viewer_joined(T0);
  s.activate(T0);
  std::vector<A> ends;
  int64_t ended_at = 0;
  for (int64_t t = T0; t <= T0 + 300 * S && ends.empty(); t += S) {
    s.activity(t);
    s.renewed(t);
    for (const A& a : s.tick(t)) {
      if (a.kind == K::kChargeMinute) {
        Status st = billing::check_live_spend_cap(cap, spent, kRate);
        if (st.ok()) {
          spent += kRate;
          s.minute_paid(a.minute);
        } else {
          ASSERT_TRUE(billing::is_spend_cap_refusal(st));
          EXPECT_EQ(a.minute, 2);
          s.minute_refused(a.minute, EndReason::kInsufficientBalance, "spend_cap");
        }
      } else if (a.kind == K::kEnd) {
        ends.push_back(a);
        ended_at = t;
      }
    }
  }
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0], (A{K::kEnd, 0, EndReason::kInsufficientBalance, "spend_cap"}));
  EXPECT_EQ(ended_at, T0 + 121 * S);  // minute 2 was asked for at 120 s; the next tick ends it
  EXPECT_EQ(s.billed_minutes(), 2);
  EXPECT_EQ(spent, 4);
  EXPECT_EQ(s.end_detail(), "spend_cap");
  EXPECT_TRUE(s.tick(T0 + 400 * S).empty());  // nothing more: no charge, no second end
}

// A detail given after the session already ended does not rewrite why it ended.
TEST(SessionState, RefusalAfterTheEndKeepsTheFirstReason) {
  SessionState s = started();
  s.end(EndReason::kTerminated);
  s.minute_refused(1, EndReason::kInsufficientBalance, "spend_cap");
  EXPECT_EQ(s.tick(T0 + S), (std::vector<A>{{K::kEnd, 0, EndReason::kTerminated}}));
  EXPECT_EQ(s.end_detail(), "");
}

TEST(SessionState, AbsentWhenNobodyEverConnects) {
  SessionState s(timeouts(), T0);
  s.activate(T0);
  s.tick(T0);
  s.minute_paid(0);
  for (int64_t t = T0; t < T0 + 300 * S; t += 10 * S) {
    s.renewed(t);
    s.activity(t);
    for (auto& a : s.tick(t)) {
      if (a.kind == K::kChargeMinute) s.minute_paid(a.minute);
      EXPECT_NE(a.kind, K::kEnd);
    }
  }
  EXPECT_EQ(s.tick(T0 + 300 * S), (std::vector<A>{{K::kEnd, 0, EndReason::kAbsent}}));
}

TEST(SessionState, LeftAfterTheLastViewerIsGoneLongEnough) {
  SessionState s = started();
  s.viewer_joined(T0 + S);
  s.viewer_left(T0 + 10 * S);
  EXPECT_EQ(s.viewers(), 1);
  s.viewer_left(T0 + 20 * S);
  EXPECT_TRUE(s.tick(T0 + 79 * S).size() <= 1);  // possibly the minute-1 charge
  s.minute_paid(1);
  EXPECT_EQ(s.tick(T0 + 80 * S), (std::vector<A>{{K::kEnd, 0, EndReason::kLeft}}));
}

TEST(SessionState, AViewerReturningWithinTheWindowKeepsTheSession) {
  SessionState s = started();
  s.viewer_left(T0 + 10 * S);
  s.viewer_joined(T0 + 50 * S);  // a reconnect
  auto a = run(s, T0 + 50 * S, T0 + 200 * S);
  for (auto& x : a) EXPECT_NE(x.kind, K::kEnd);
  EXPECT_EQ(s.phase(), SessionPhase::kActive);
}

TEST(SessionState, IdleWithoutSpeechOrKeepAlive) {
  SessionState s = started();
  s.activity(T0 + 30 * S);
  auto a = run(s, T0 + 31 * S, T0 + 149 * S, S, true, false);
  for (auto& x : a) EXPECT_NE(x.kind, K::kEnd);
  s.renewed(T0 + 150 * S);
  EXPECT_EQ(s.tick(T0 + 150 * S), (std::vector<A>{{K::kEnd, 0, EndReason::kIdle}}));
}

TEST(SessionState, MaxDuration) {
  SessionState s = started();
  auto a = run(s, T0 + S, T0 + 3599 * S, 10 * S);
  for (auto& x : a) EXPECT_NE(x.kind, K::kEnd);
  EXPECT_EQ(s.tick(T0 + 3600 * S), (std::vector<A>{{K::kEnd, 0, EndReason::kMaxDuration}}));
  EXPECT_EQ(s.billed_minutes(), 60);  // 0..59, each charged at its start
}

TEST(SessionState, PausesAfterGraceWithoutRenewalAndIsNotBilledWhilePaused) {
  SessionState s = started();
  // Speech continues but the token is never renewed after T0.
  auto a = run(s, T0 + S, T0 + 299 * S, S, false, true);
  for (auto& x : a) EXPECT_NE(x.kind, K::kPause);
  EXPECT_EQ(s.billed_minutes(), 5);  // minutes 0..4 started before 299 s
  s.activity(T0 + 300 * S);
  EXPECT_EQ(s.tick(T0 + 300 * S), (std::vector<A>{{K::kPause}}));
  EXPECT_EQ(s.phase(), SessionPhase::kPaused);
  // Ten paused minutes: no charge, no idle end.
  for (int64_t t = T0 + 301 * S; t < T0 + 900 * S; t += 5 * S) EXPECT_TRUE(s.tick(t).empty()) << (t - T0) / S;
  EXPECT_EQ(s.active_us(T0 + 900 * S), 300 * S);
  // A good heartbeat resumes; billing continues where it stopped (minute 5 starts at 300 s active).
  s.renewed(T0 + 900 * S);
  EXPECT_EQ(s.tick(T0 + 900 * S), (std::vector<A>{{K::kResume}, {K::kChargeMinute, 5}}));
  s.minute_paid(5);
  EXPECT_EQ(s.phase(), SessionPhase::kActive);
  EXPECT_TRUE(s.tick(T0 + 959 * S).empty());
  EXPECT_EQ(s.tick(T0 + 960 * S), (std::vector<A>{{K::kChargeMinute, 6}}));
}

TEST(SessionState, RenewalWithinGraceNeverPauses) {
  SessionState s = started();
  auto a = run(s, T0 + S, T0 + 1800 * S, 60 * S);  // a renewal every 60 s
  for (auto& x : a) EXPECT_TRUE(x.kind == K::kChargeMinute) << static_cast<int>(x.kind);
  EXPECT_EQ(s.billed_minutes(), 30);  // minutes 0..29 started by 1741 s
}

TEST(SessionState, ExplicitEndIsReportedOnce) {
  SessionState s = started();
  s.end(EndReason::kTerminated);
  EXPECT_EQ(s.tick(T0 + S), (std::vector<A>{{K::kEnd, 0, EndReason::kTerminated}}));
  s.end(EndReason::kShutdown);  // already ended: the first reason stays
  EXPECT_TRUE(s.tick(T0 + 2 * S).empty());
  EXPECT_EQ(s.end_reason(), EndReason::kTerminated);
}

TEST(SessionState, Names) {
  EXPECT_EQ(end_reason_name(EndReason::kMaxDuration), "max_duration");
  EXPECT_EQ(end_reason_name(EndReason::kInsufficientBalance), "insufficient_balance");
  EXPECT_EQ(phase_name(SessionPhase::kPaused), "paused");
}

}  // namespace
}  // namespace imago::live
