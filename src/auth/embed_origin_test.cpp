#include "auth/embed_origin.h"

#include <gtest/gtest.h>

namespace imago {
namespace {

TEST(EmbedOrigin, NormalizesWhatBrowsersSendAndRefusesTheRest) {
  EXPECT_EQ(*normalize_embed_origin("https://shop.example"), "https://shop.example");
  EXPECT_EQ(*normalize_embed_origin("HTTPS://Shop.Example:443/"), "https://shop.example");
  EXPECT_EQ(*normalize_embed_origin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(*normalize_embed_origin("http://localhost:80"), "http://localhost");
  EXPECT_EQ(*normalize_embed_origin("http://[::1]:3000"), "http://[::1]:3000");
  EXPECT_EQ(*normalize_embed_origin("https://shop.example:08443"), "https://shop.example:8443");
  for (const char* bad : {"", "shop.example", "ftp://shop.example", "https://", "https://shop.example/page",
                          "https://shop.example?x=1", "https://shop.example#x", "https://user@shop.example",
                          "https://shop.example:", "https://shop.example:99999", "https://shop.example:0",
                          "https://sh op.example", "https://.example", "*", "null", "https://[zz]:1"}) {
    auto r = normalize_embed_origin(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(normalize_embed_origin("https://" + std::string(300, 'a') + ".example").ok());
}

TEST(EmbedOrigin, AJoinFromTheSiteIsAcceptedAndFromAnyOtherRefusedWithTheReason) {
  const std::string shop = "https://shop.example";
  // The site's own page (its script opens the WebSocket).
  EXPECT_TRUE(check_embed_origin(shop, "https://shop.example", false, std::nullopt).ok());
  EXPECT_TRUE(check_embed_origin(shop, "https://SHOP.example", false, std::nullopt).ok());
  // Another site, or the same host over another scheme or port.
  for (const char* other : {"https://evil.example", "http://shop.example", "https://shop.example:8443"}) {
    Status st = check_embed_origin(shop, std::string_view(other), false, std::nullopt);
    EXPECT_EQ(st.code(), Code::kForbidden) << other;
    EXPECT_NE(st.message().find("restricted to pages of https://shop.example"), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(other), std::string::npos) << st.message();
  }
  // Not a browser.
  EXPECT_EQ(check_embed_origin(shop, std::nullopt, false, std::nullopt).code(), Code::kForbidden);
  EXPECT_EQ(check_embed_origin(shop, "", false, std::nullopt).code(), Code::kForbidden);
  // The viewer page (this server's origin): only when it runs framed by the site.
  EXPECT_TRUE(check_embed_origin(shop, "http://imago.local:8080", true, "https://shop.example").ok());
  EXPECT_EQ(check_embed_origin(shop, "http://imago.local:8080", true, std::nullopt).code(), Code::kForbidden);
  Status st = check_embed_origin(shop, "http://imago.local:8080", true, "https://evil.example");
  EXPECT_EQ(st.code(), Code::kForbidden);
  EXPECT_NE(st.message().find("?origin=https://shop.example"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace imago
