// The life of one live session as a pure state machine (docs/live-protocol.md): no threads, no
// I/O, time passed in. The room feeds it what happened (viewers, speech, heartbeats, the outcome
// of each minute's charge) and calls tick(now) regularly; tick answers with what to do (charge a
// minute, pause, resume, end). Unit tests drive it with plain numbers, never sleeping.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imago::live {

enum class SessionPhase { kStarting, kActive, kPaused, kEnded };
std::string_view phase_name(SessionPhase p);  // starting, active, paused, ended

enum class EndReason { kLeft, kIdle, kAbsent, kMaxDuration, kInsufficientBalance, kTerminated, kShutdown };
std::string_view end_reason_name(EndReason r);  // left, idle, absent, max_duration, ...

// Operator settings (flags --live-*), in microseconds.
struct SessionTimeouts {
  int64_t absent_us = 300'000'000;  // nobody connected since start
  int64_t left_us = 60'000'000;     // last viewer gone
  int64_t idle_us = 120'000'000;    // no speech either way, no keep-alive
  int64_t max_duration_us = 3600'000'000;
  int64_t grace_us = 300'000'000;          // after the last good token renewal, then pause
  int64_t billing_period_us = 60'000'000;  // one billed "minute"
};

struct SessionAction {
  enum class Kind { kChargeMinute, kPause, kResume, kEnd };
  Kind kind;
  int64_t minute = 0;                   // kChargeMinute: 0-based index of the minute to pay
  EndReason reason = EndReason::kLeft;  // kEnd
  // kEnd: more about why, for session.ended's `detail` ("spend_cap" when the monthly live spend
  // cap refused the next minute: reason insufficient_balance, nothing charged); else empty.
  std::string detail;
  bool operator==(const SessionAction&) const = default;
};

class SessionState {
 public:
  SessionState(SessionTimeouts t, int64_t created_us);

  // The renderer is ready: starting -> active; the first minute becomes due.
  void activate(int64_t now_us);
  void viewer_joined(int64_t now_us);
  void viewer_left(int64_t now_us);
  // Speech in either direction, or a keep_alive: resets the idle timeout.
  void activity(int64_t now_us);
  // A token renewal succeeded (REST or WebSocket heartbeat): resets grace; a paused session
  // resumes on the next tick.
  void renewed(int64_t now_us);
  // Outcome of a kChargeMinute action. A refused minute ends the session with `reason` (and
  // `detail` for the kEnd action); it is not counted as billed.
  void minute_paid(int64_t minute);
  void minute_refused(int64_t minute, EndReason reason, std::string detail = {});
  // The charge could not be made for another reason (database busy): ask again on the next tick.
  void minute_retry(int64_t minute);
  // Ends at once (DELETE, shutdown); the next tick reports kEnd once.
  void end(EndReason reason);

  // Advances to `now_us` and returns the actions due, in order. Never returns a charge while a
  // previous charge is outstanding, so one minute is asked for once per outcome.
  std::vector<SessionAction> tick(int64_t now_us);

  SessionPhase phase() const { return phase_; }
  std::optional<EndReason> end_reason() const { return end_reason_; }
  const std::string& end_detail() const { return end_detail_; }
  int viewers() const { return viewers_; }
  int64_t billed_minutes() const { return paid_minutes_; }
  int64_t active_us(int64_t now_us) const;  // time spent active (billable), excluding pauses
  int64_t created_us() const { return created_us_; }

 private:
  void finish(EndReason r);
  SessionTimeouts t_;
  SessionPhase phase_ = SessionPhase::kStarting;
  std::optional<EndReason> end_reason_;
  std::string end_detail_;
  bool end_reported_ = false;
  int64_t created_us_;
  int viewers_ = 0;
  bool ever_joined_ = false;
  int64_t last_left_us_ = 0;  // when viewers dropped to 0
  int64_t last_activity_us_;
  int64_t last_renewal_us_;
  int64_t active_accum_us_ = 0;            // active time before active_since_us_
  int64_t active_since_us_ = 0;            // start of the current active stretch
  int64_t paid_minutes_ = 0;               // minutes charged so far
  std::optional<int64_t> pending_minute_;  // asked for, outcome not yet known
  bool resume_wanted_ = false;
};

}  // namespace imago::live
