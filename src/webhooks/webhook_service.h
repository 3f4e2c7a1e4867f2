// Webhook subscriptions as a domain, without HTTP (SPEC 6): registering a target (checked by the
// SSRF guard now, and again on every delivery since DNS can change), listing, deleting, the test
// ping (one synchronous attempt) and the delivery log. Deliveries themselves run as jobs.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "fetch/fetcher.h"
#include "store/webhook_store.h"
#include "util/clock.h"
#include "util/status.h"
#include "webhooks/delivery.h"

namespace imago::webhooks {

inline constexpr size_t kMaxWebhooksPerAccount = 20;

struct NewWebhook {
  std::string url;
  std::vector<std::string> events;  // empty: every event; each must be one of known_events()
  std::optional<std::string> description;
};

struct TestPing {
  std::string delivery_id;
  AttemptResult result;
  int attempts = 0;
};

struct DeliveryLog {
  WebhookDelivery delivery;
  std::vector<DeliveryAttempt> attempts;
};

class WebhookService {
 public:
  WebhookService(WebhookStore& store, const fetch::Fetcher& fetcher, Clock& clock)
      : store_(store), fetcher_(fetcher), clock_(clock) {}

  // The new subscription with its secret (the only time it is returned). kInvalidArgument for a
  // refused target, an unknown event or an account at kMaxWebhooksPerAccount.
  Result<Webhook> create(const std::string& account_id, NewWebhook in);
  Result<std::vector<Webhook>> list(const std::string& account_id);
  // kNotFound for a missing webhook or another account's.
  Result<Webhook> get(const std::string& account_id, const std::string& id);
  Status remove(const std::string& account_id, const std::string& id);
  // Sends a "ping" event now, once, without retries, and logs the attempt.
  Result<TestPing> test(const std::string& account_id, const std::string& id);
  // The latest `limit` deliveries of the webhook, newest first, each with its attempts.
  Result<std::vector<DeliveryLog>> deliveries(const std::string& account_id, const std::string& id,
                                              int limit);

 private:
  WebhookStore& store_;
  const fetch::Fetcher& fetcher_;
  Clock& clock_;
};

}  // namespace imago::webhooks
