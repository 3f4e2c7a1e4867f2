// The named operations that move credits (SPEC 8.6), and the one place their operation keys are
// derived. A charge and its refund are built from the same facts (account, job, subject), so the
// refund's key always matches its charge: a refund can happen once, and only for that charge.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "billing/ledger.h"

namespace imago::billing {

// How a live-session minute is billed (SPEC 8.6 per-minute table). The names are the keys of the
// credit summary's minutes_estimate.
enum class MinuteRate {
  kVoiceChat,   // managed agent, no avatar
  kCameraChat,  // managed agent, camera on
  kEssenceCloud,
  kEssenceSelfHosted,
  kExpressionCloud,
  kExpressionSelfHosted,
};
std::string_view minute_rate_name(MinuteRate r);
std::optional<MinuteRate> parse_minute_rate(std::string_view name);
int64_t credits_per_minute(MinuteRate r);
// Whole minutes to bill for a duration: every started minute counts (0 s bills nothing).
int64_t billable_minutes(double seconds);

// One-time operations, keyed by the job that does the work.
LedgerOp agent_generation_charge(const std::string& account_id, const std::string& job_id,
                                 const std::string& agent_code);
LedgerOp dynamics_generation_charge(const std::string& account_id, const std::string& job_id,
                                    const std::string& agent_code);

// Minute `minute_index` (0-based) of live session `session_id`; replays of the same minute (a
// retried billing tick, a second node) charge once.
LedgerOp live_session_minute(const std::string& account_id, const std::string& session_id,
                             int64_t minute_index, MinuteRate rate);

// A rendered video of `minutes` billable minutes at `rate`, keyed by the video job.
LedgerOp video_render_minutes(const std::string& account_id, const std::string& video_job_id, int64_t minutes,
                              MinuteRate rate);

// Credits back for `charge` (the same amount, to the top-up bucket). Its key is derived from the
// charge's, so each charge is refunded at most once. `why` says what went wrong.
LedgerOp refund_of(const LedgerOp& charge, std::string_view why);

// Credits added by an operator (admin API or CLI). With an idempotency key (the client's
// Idempotency-Key header) a retried top-up adds once; without one every call is a new top-up.
LedgerOp operator_topup(const std::string& account_id, int64_t amount, std::string reason,
                        std::string_view idempotency_key);

// The credits an account starts with (once per account).
LedgerOp initial_credits(const std::string& account_id, int64_t amount);

}  // namespace imago::billing
