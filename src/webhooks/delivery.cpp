#include "webhooks/delivery.h"

#include <chrono>

#include "webhooks/signing.h"

namespace imago::webhooks {

AttemptResult attempt_delivery(const fetch::Fetcher& fetcher, Clock& clock, const Webhook& hook,
                               const WebhookDelivery& delivery, int timeout_ms) {
  AttemptResult out;
  fetch::FetchRequest req;
  req.method = "POST";
  req.url = hook.url;
  req.body = delivery.payload;
  req.headers =
      delivery_headers(hook.secret, delivery.id, delivery.event_type, clock.now_s(), delivery.payload);
  req.max_bytes = 64 * 1024;  // the receiver's answer is not used beyond its status
  req.truncate_body = true;
  req.timeout_ms = timeout_ms;
  req.max_redirects = 0;  // a redirect is a failed delivery, never followed with the signed body
  const int64_t t0 = clock.monotonic_ms();
  auto r = fetcher.fetch(req);
  out.duration_ms = clock.monotonic_ms() - t0;
  if (!r.ok()) {
    out.error = r.status().message();
    out.retryable = r.status().code() != Code::kInvalidArgument;
    return out;
  }
  out.status_code = static_cast<int>(r->status);
  out.delivered = r->status >= 200 && r->status < 300;
  if (!out.delivered) out.error = "HTTP " + std::to_string(r->status);
  return out;
}

}  // namespace imago::webhooks
