// Paying for one minute of a live session (SPEC 8.6). The one place a session touches the ledger,
// so it can move onto src/billing's named live-session-minute operation without touching rooms.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/ledger_store.h"
#include "util/status.h"

namespace imago::live {

// Credits per minute for a billing type: essence_cloud 2, expression_cloud 4,
// essence_self_hosted 1, expression_self_hosted 2, voice_chat 10, camera_chat 30
// (billing/prices.h). 0 for anything else.
int64_t live_rate(std::string_view billing_type);
// The cheapest per-minute avatar rate (what a runtime token requires as a balance).
int64_t cheapest_live_rate();
bool is_live_billing_type(std::string_view billing_type);
// What a viewer asked for when joining: the agent's avatar session, an audio-only voice_chat, or a
// camera_chat (the viewer's camera frames go to the model with their turns).
enum class ChatMode { kAvatar, kVoiceChat, kCameraChat };

// The billing type of a cloud session of an agent with `model` ("essence", "expression") in
// `mode`: voice_chat and camera_chat have their own rates whatever the model.
std::string_view cloud_billing_type(std::string_view model, ChatMode mode = ChatMode::kAvatar);
// The mode a join asks for with its `billing_type` query parameter (absent: the avatar session).
// kInvalidArgument for any other value, and for camera_chat where no model can see the frames
// (`model_sees_images`: the operator configured a chat model with --llm-vision): it is billed at
// 30 a minute only where the frames are used.
Result<ChatMode> chat_mode_for_join(const std::optional<std::string_view>& billing_type,
                                    bool model_sees_images);

// "live_minute:<session_id>:<minute>" (billing/operations.h): a retried or duplicated tick never
// charges twice.
std::string minute_operation_key(std::string_view session_id, int64_t minute);

// Charges minute `minute` (0-based) of `session_id`. kInsufficientFunds when the balance cannot
// pay it, or when it would take the month's live spend past the account's cap
// (billing::is_spend_cap_refusal tells the two apart); the same key again returns the first entry.
Result<LedgerEntry> charge_live_minute(LedgerStore& ledger, const std::string& account_id,
                                       const std::string& session_id, int64_t minute,
                                       std::string_view billing_type, const std::string& agent_code);

// Whether one more minute at `rate` credits fits under the account's monthly live spend cap: Ok
// without a cap, else billing::check_live_spend_cap's answer. Used to refuse a runtime token or a
// new session up front; the charge itself checks again atomically.
Status live_cap_allows_minute(LedgerStore& ledger, const std::string& account_id, int64_t rate);

}  // namespace imago::live
