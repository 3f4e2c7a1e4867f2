#include "webhooks/signing.h"

#include <gtest/gtest.h>

#include "util/base64.h"
#include "util/crypto.h"

namespace imago::webhooks {
namespace {

TEST(Signing, MatchesTheStandardWebhooksReferenceVector) {
  // Test vector from the Standard Webhooks specification.
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const std::string id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const std::string body = R"({"test": 2432232314})";
  EXPECT_EQ(sign_standard(secret, id, 1614265330, body), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  EXPECT_TRUE(verify_standard(secret, id, "1614265330", body,
                              "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", 1614265330 + 10));
}

TEST(Signing, ImagoSignatureIsHmacOverTimestampAndBody) {
  const std::string secret = new_secret();
  EXPECT_EQ(secret.rfind("whsec_", 0), 0u);
  EXPECT_EQ(base64_decode(secret.substr(6))->size(), 32u);
  const std::string body = R"({"type":"agent.ready"})";
  std::string sig = sign_imago(secret, 1700000000, body);
  EXPECT_EQ(sig, "sha256=" + to_hex(hmac_sha256(secret, "1700000000." + body)));
  EXPECT_TRUE(verify_imago(secret, "1700000000", body, sig, 1700000100));
  EXPECT_FALSE(verify_imago(secret, "1700000000", body + " ", sig, 1700000100));   // body changed
  EXPECT_FALSE(verify_imago(secret, "1700000001", body, sig, 1700000100));         // timestamp changed
  EXPECT_FALSE(verify_imago(secret, "1700000000", body, sig, 1700000000 + 3600));  // too old
  EXPECT_FALSE(verify_imago(new_secret(), "1700000000", body, sig, 1700000100));   // other secret
}

TEST(Signing, HeadersCarryIdEventTimestampAndBothSignatures) {
  auto h = delivery_headers("whsec_AAAA", "d-1", "agent.failed", 42, "{}");
  auto get = [&](const std::string& n) {
    for (auto& [k, v] : h) {
      if (k == n) return v;
    }
    return std::string();
  };
  EXPECT_EQ(get("webhook-id"), "d-1");
  EXPECT_EQ(get("X-Imago-Delivery"), "d-1");
  EXPECT_EQ(get("X-Imago-Event"), "agent.failed");
  EXPECT_EQ(get("webhook-timestamp"), "42");
  EXPECT_EQ(get("X-Imago-Signature"), sign_imago("whsec_AAAA", 42, "{}"));
  EXPECT_EQ(get("webhook-signature"), sign_standard("whsec_AAAA", "d-1", 42, "{}"));
}

}  // namespace
}  // namespace imago::webhooks
