// One webhook delivery attempt: POST the stored payload to the subscription's URL through the
// SSRF guard (no redirects followed), signed with fresh timestamp headers.
#pragma once
#include <optional>
#include <string>

#include "fetch/fetcher.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::webhooks {

struct AttemptResult {
  bool delivered = false;          // 2xx
  std::optional<int> status_code;  // null on network error or timeout
  std::optional<std::string> error;
  bool retryable = true;  // false when the target is refused outright (SSRF guard)
  int64_t duration_ms = 0;
};

inline constexpr int kDeliveryTimeoutMs = 10000;

AttemptResult attempt_delivery(const fetch::Fetcher& fetcher, Clock& clock, const Webhook& hook,
                               const WebhookDelivery& delivery, int timeout_ms = kDeliveryTimeoutMs);

}  // namespace imago::webhooks
