// Webhook subscriptions, deliveries and the log of every delivery attempt (SPEC 6).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct Webhook {
  std::string id;  // UUID
  std::string account_id;
  std::string url;
  std::vector<std::string> events;  // empty: every event
  std::optional<std::string> description;
  std::string secret;  // "whsec_<base64>"; shown to the user only at creation
  bool active = true;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  bool subscribed(std::string_view event) const;
};

struct WebhookDelivery {
  std::string id;  // UUID, the same on every retry (webhook-id header)
  std::string webhook_id;
  std::string account_id;
  std::string event_type;
  std::string payload;  // the exact JSON body sent
  std::string state;    // "pending", "delivered", "failed"
  int attempts = 0;
  std::optional<int> last_status_code;
  std::optional<std::string> last_error;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> delivered_at;
};

struct DeliveryAttempt {
  std::string delivery_id;
  int attempt = 0;
  std::optional<int> status_code;
  std::optional<std::string> error;
  int64_t duration_ms = 0;
  int64_t created_at = 0;
};

class WebhookStore {
 public:
  virtual ~WebhookStore() = default;
  virtual Status create(const Webhook& w) = 0;
  virtual Result<std::vector<Webhook>> list(const std::string& account_id) = 0;
  // kNotFound for a missing webhook or another account's.
  virtual Result<Webhook> get(const std::string& account_id, const std::string& id) = 0;
  virtual Result<Webhook> get_by_id(const std::string& id) = 0;
  virtual Status remove(const std::string& account_id, const std::string& id) = 0;

  // A delivery that is sent right away (the test ping) rather than through the queue.
  virtual Status create_delivery(const WebhookDelivery& d) = 0;
  virtual Result<WebhookDelivery> get_delivery(const std::string& id) = 0;
  virtual Result<std::vector<WebhookDelivery>> list_deliveries(const std::string& webhook_id, int limit) = 0;
  virtual Result<std::vector<DeliveryAttempt>> list_attempts(const std::string& delivery_id) = 0;
  // Logs one attempt and updates the delivery's state in one transaction; returns the attempt number.
  virtual Result<int> record_attempt(const std::string& delivery_id, std::optional<int> status_code,
                                     std::optional<std::string> error, int64_t duration_ms,
                                     const std::string& new_state) = 0;
  // Queues `event` for every active subscription of the account: one delivery and one delivery
  // job each. Returns the delivery ids.
  virtual Result<std::vector<std::string>> enqueue_event(const std::string& account_id,
                                                         const std::string& event,
                                                         const std::string& data_json) = 0;
};

}  // namespace imago
