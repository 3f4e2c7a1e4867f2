#include "live/session_state.h"

namespace imago::live {

std::string_view phase_name(SessionPhase p) {
  switch (p) {
    case SessionPhase::kStarting:
      return "starting";
    case SessionPhase::kActive:
      return "active";
    case SessionPhase::kPaused:
      return "paused";
    case SessionPhase::kEnded:
      return "ended";
  }
  return "ended";
}

std::string_view end_reason_name(EndReason r) {
  switch (r) {
    case EndReason::kLeft:
      return "left";
    case EndReason::kIdle:
      return "idle";
    case EndReason::kAbsent:
      return "absent";
    case EndReason::kMaxDuration:
      return "max_duration";
    case EndReason::kInsufficientBalance:
      return "insufficient_balance";
    case EndReason::kTerminated:
      return "terminated";
    case EndReason::kShutdown:
      return "shutdown";
  }
  return "terminated";
}

SessionState::SessionState(SessionTimeouts t, int64_t created_us)
    : t_(t), created_us_(created_us), last_activity_us_(created_us), last_renewal_us_(created_us) {}

void SessionState::activate(int64_t now_us) {
  if (phase_ != SessionPhase::kStarting) return;
  phase_ = SessionPhase::kActive;
  active_since_us_ = now_us;
  last_activity_us_ = now_us;
}

void SessionState::viewer_joined(int64_t now_us) {
  (void)now_us;
  ++viewers_;
  ever_joined_ = true;
}

void SessionState::viewer_left(int64_t now_us) {
  if (viewers_ > 0) --viewers_;
  if (viewers_ == 0) last_left_us_ = now_us;
}

void SessionState::activity(int64_t now_us) {
  if (now_us > last_activity_us_) last_activity_us_ = now_us;
}

void SessionState::renewed(int64_t now_us) {
  if (now_us > last_renewal_us_) last_renewal_us_ = now_us;
}

void SessionState::minute_paid(int64_t minute) {
  if (pending_minute_ && *pending_minute_ == minute) {
    paid_minutes_ = minute + 1;
    pending_minute_.reset();
  }
}

void SessionState::minute_refused(int64_t minute, EndReason reason, std::string detail) {
  if (pending_minute_ && *pending_minute_ == minute) pending_minute_.reset();
  if (phase_ != SessionPhase::kEnded) end_detail_ = std::move(detail);
  finish(reason);
}

void SessionState::minute_retry(int64_t minute) {
  if (pending_minute_ && *pending_minute_ == minute) pending_minute_.reset();
}

void SessionState::end(EndReason reason) {
  finish(reason);
}

void SessionState::finish(EndReason r) {
  if (phase_ == SessionPhase::kEnded) return;
  end_reason_ = r;
  phase_ = SessionPhase::kEnded;
}

int64_t SessionState::active_us(int64_t now_us) const {
  if (phase_ == SessionPhase::kActive) return active_accum_us_ + (now_us - active_since_us_);
  return active_accum_us_;
}

std::vector<SessionAction> SessionState::tick(int64_t now_us) {
  std::vector<SessionAction> out;
  if (phase_ != SessionPhase::kEnded) {
    std::optional<EndReason> why;
    if (now_us - created_us_ >= t_.max_duration_us) {
      why = EndReason::kMaxDuration;
    } else if (!ever_joined_ && now_us - created_us_ >= t_.absent_us) {
      why = EndReason::kAbsent;
    } else if (ever_joined_ && viewers_ == 0 && now_us - last_left_us_ >= t_.left_us) {
      why = EndReason::kLeft;
    } else if (phase_ == SessionPhase::kActive && now_us - last_activity_us_ >= t_.idle_us) {
      why = EndReason::kIdle;
    }
    if (why) {
      if (phase_ == SessionPhase::kActive) active_accum_us_ += now_us - active_since_us_;
      phase_ = SessionPhase::kPaused;  // freeze the billable clock before ending
      finish(*why);
    }
  }
  if (phase_ == SessionPhase::kEnded) {
    if (!end_reported_) {
      end_reported_ = true;
      out.push_back({SessionAction::Kind::kEnd, 0, *end_reason_, end_detail_});
    }
    return out;
  }
  const bool renewal_fresh = now_us - last_renewal_us_ < t_.grace_us;
  if (phase_ == SessionPhase::kActive && !renewal_fresh) {
    active_accum_us_ += now_us - active_since_us_;
    phase_ = SessionPhase::kPaused;
    out.push_back({SessionAction::Kind::kPause});
  } else if (phase_ == SessionPhase::kPaused && renewal_fresh) {
    phase_ = SessionPhase::kActive;
    active_since_us_ = now_us;
    // Paused time is neither billed nor counted as idleness.
    last_activity_us_ = std::max(last_activity_us_, now_us);
    out.push_back({SessionAction::Kind::kResume});
  }
  if (phase_ == SessionPhase::kActive && !pending_minute_ &&
      active_us(now_us) >= paid_minutes_ * t_.billing_period_us) {
    pending_minute_ = paid_minutes_;
    out.push_back({SessionAction::Kind::kChargeMinute, paid_minutes_});
  }
  return out;
}

}  // namespace imago::live
