#include "webhooks/signing.h"

#include <cstdlib>

#include "util/base64.h"
#include "util/crypto.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::webhooks {

namespace {

std::string key_of(std::string_view secret) {
  std::string_view b64 = secret;
  if (b64.rfind("whsec_", 0) == 0) b64.remove_prefix(6);
  auto k = base64_decode(b64);
  return k ? *k : std::string(secret);
}

bool fresh(std::string_view timestamp, int64_t now, int64_t tolerance) {
  auto t = parse_int(timestamp);
  return t && std::llabs(now - *t) <= tolerance;
}

}  // namespace

std::string new_secret() {
  return "whsec_" + base64_encode(random_bytes(32));
}

std::string sign_standard(std::string_view secret, std::string_view id, int64_t timestamp,
                          std::string_view body) {
  std::string msg = std::string(id) + "." + std::to_string(timestamp) + "." + std::string(body);
  return "v1," + base64_encode(hmac_sha256(key_of(secret), msg));
}

std::string sign_imago(std::string_view secret, int64_t timestamp, std::string_view body) {
  std::string msg = std::to_string(timestamp) + "." + std::string(body);
  return "sha256=" + to_hex(hmac_sha256(secret, msg));
}

bool verify_standard(std::string_view secret, std::string_view id, std::string_view timestamp,
                     std::string_view body, std::string_view signature_header, int64_t now,
                     int64_t tolerance_s) {
  if (!fresh(timestamp, now, tolerance_s)) return false;
  std::string expected = sign_standard(secret, id, *parse_int(timestamp), body);
  // The header may list several space-separated signatures (key rotation).
  for (auto sig : split(signature_header, ' ')) {
    if (constant_time_equal(trim(sig), expected)) return true;
  }
  return false;
}

bool verify_imago(std::string_view secret, std::string_view timestamp, std::string_view body,
                  std::string_view signature_header, int64_t now, int64_t tolerance_s) {
  if (!fresh(timestamp, now, tolerance_s)) return false;
  return constant_time_equal(trim(signature_header), sign_imago(secret, *parse_int(timestamp), body));
}

std::vector<std::pair<std::string, std::string>> delivery_headers(std::string_view secret,
                                                                  std::string_view delivery_id,
                                                                  std::string_view event, int64_t timestamp,
                                                                  std::string_view body) {
  std::string ts = std::to_string(timestamp);
  return {
      {"Content-Type", "application/json"},
      {"webhook-id", std::string(delivery_id)},
      {"webhook-timestamp", ts},
      {"webhook-signature", sign_standard(secret, delivery_id, timestamp, body)},
      {"X-Imago-Event", std::string(event)},
      {"X-Imago-Delivery", std::string(delivery_id)},
      {"X-Imago-Timestamp", ts},
      {"X-Imago-Signature", sign_imago(secret, timestamp, body)},
  };
}

const std::vector<std::string>& known_events() {
  static const std::vector<std::string> events = {"agent.ready", "agent.failed", "dynamics.ready",
                                                  "dynamics.failed", "session.ended"};
  return events;
}

}  // namespace imago::webhooks
