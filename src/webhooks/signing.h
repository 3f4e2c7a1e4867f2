// Webhook signatures. Every delivery carries two equivalent signature schemes over the same
// bytes, so receivers can use whichever they have a library for:
//   Standard Webhooks:  webhook-id, webhook-timestamp,
//                       webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>
//                       where key = base64-decode(secret without its "whsec_" prefix)
//   Imago headers:      X-Imago-Event, X-Imago-Delivery, X-Imago-Timestamp,
//                       X-Imago-Signature: sha256=<hex HMAC-SHA256(secret, "{timestamp}.{body}")>
//                       where secret is the whole "whsec_..." string
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace imago::webhooks {

// "whsec_" + base64 of 32 random bytes.
std::string new_secret();

std::string sign_standard(std::string_view secret, std::string_view id, int64_t timestamp,
                          std::string_view body);
std::string sign_imago(std::string_view secret, int64_t timestamp, std::string_view body);

// Constant-time checks, with a tolerance on the timestamp against `now` (replay window).
bool verify_standard(std::string_view secret, std::string_view id, std::string_view timestamp,
                     std::string_view body, std::string_view signature_header, int64_t now,
                     int64_t tolerance_s = 300);
bool verify_imago(std::string_view secret, std::string_view timestamp, std::string_view body,
                  std::string_view signature_header, int64_t now, int64_t tolerance_s = 300);

// All headers of one delivery attempt.
std::vector<std::pair<std::string, std::string>> delivery_headers(std::string_view secret,
                                                                  std::string_view delivery_id,
                                                                  std::string_view event, int64_t timestamp,
                                                                  std::string_view body);

// Events a subscription may name.
const std::vector<std::string>& known_events();

}  // namespace imago::webhooks
