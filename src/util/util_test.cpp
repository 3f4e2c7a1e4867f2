#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <thread>

#include "util/base64.h"
#include "util/clock.h"
#include "util/crypto.h"
#include "util/json.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago {

TEST(Base64, RoundTripsEveryLength) {
  std::string data;
  for (int i = 0; i < 64; ++i) {
    auto enc = base64_encode(data);
    auto dec = base64_decode(enc);
    ASSERT_TRUE(dec.has_value()) << i;
    EXPECT_EQ(*dec, data);
    auto url = base64_decode(base64url_encode(data));
    ASSERT_TRUE(url.has_value());
    EXPECT_EQ(*url, data);
    data.push_back(static_cast<char>(i * 37));
  }
}

TEST(Base64, RejectsGarbage) {
  EXPECT_FALSE(base64_decode("abc$").has_value());
  EXPECT_FALSE(base64_decode("a").has_value());
  EXPECT_FALSE(base64_decode("ab=c").has_value());
}

TEST(Crypto, Sha256KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Crypto, Sha256ContextIsReusedCleanlyAcrossCallsAndThreads) {
  // FIPS 180-2 vectors, in turns, so a context that kept state from the previous input would fail.
  const std::string million_a(1000000, 'a');
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex(million_a), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
  std::string other;
  std::thread([&] { other = sha256_hex("abc"); }).join();
  EXPECT_EQ(other, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Crypto, HmacKnownVector) {
  // RFC 4231 test case 2.
  EXPECT_EQ(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Crypto, ConstantTimeEqual) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
}

TEST(Random, IdsAreDistinctAndWellFormed) {
  auto a = random_uuid(), b = random_uuid();
  EXPECT_NE(a, b);
  EXPECT_TRUE(is_uuid(a));
  EXPECT_EQ(a[14], '4');
  EXPECT_FALSE(is_uuid("not-a-uuid"));
  EXPECT_EQ(random_base62(30).size(), 30u);
  EXPECT_EQ(new_id("key").substr(0, 4), "key_");
}

TEST(Random, UniqueIdsHaveTheShapeOfNewIdAndDoNotRepeat) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    std::string id = new_unique_id("req");
    ASSERT_EQ(id.size(), 24u);
    ASSERT_EQ(id.substr(0, 4), "req_");
    for (char c : id.substr(4)) ASSERT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
    ASSERT_TRUE(seen.insert(id).second) << id;
  }
}

TEST(Strings, UrlDecode) {
  EXPECT_EQ(url_decode("a%20b+c", true).value(), "a b c");
  EXPECT_EQ(url_decode("a+c", false).value(), "a+c");
  EXPECT_FALSE(url_decode("%2", false).has_value());
  EXPECT_FALSE(url_decode("%zz", false).has_value());
}

TEST(Strings, FormUrlencoded) {
  auto f = parse_form_urlencoded("email=a%40b.org&password=x+y%26z&&empty=&flag&email=c");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->at("email"), "c");  // last one wins
  EXPECT_EQ(f->at("password"), "x y&z");
  EXPECT_EQ(f->at("empty"), "");
  EXPECT_EQ(f->at("flag"), "");
  EXPECT_EQ(f->size(), 4u);
  EXPECT_FALSE(parse_form_urlencoded("a=%zz").has_value());
}

TEST(Strings, Utf8) {
  EXPECT_TRUE(is_valid_utf8("h\xc3\xa9llo"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
}

TEST(Strings, Rfc3339) {
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00Z");
}

TEST(Json, TypedGettersNameTheField) {
  auto o = parse_json_object(R"({"a":"x","n":1.5,"i":3,"b":true,"z":null})").value();
  EXPECT_EQ(*get_string(o, "a").value(), "x");
  EXPECT_FALSE(get_string(o, "missing").value().has_value());
  EXPECT_FALSE(get_string(o, "z").value().has_value());
  auto bad = get_string(o, "n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'n'"), std::string::npos);
  EXPECT_DOUBLE_EQ(*get_number(o, "n").value(), 1.5);
  EXPECT_EQ(*get_integer(o, "i").value(), 3);
  EXPECT_FALSE(get_integer(o, "n").ok());
  EXPECT_TRUE(*get_bool(o, "b").value());
  EXPECT_FALSE(parse_json_object("[1]").ok());
  EXPECT_FALSE(parse_json_object("{").ok());
  EXPECT_TRUE(parse_json_object("  ", true).ok());
}

TEST(Json, SerializesNumbersPlainly) {
  json::value v = {{"a", 0.5}, {"b", 500.0},  {"c", 1.0 / 3},
                   {"d", 7},   {"s", "q\"x"}, {"l", json::array{1, 2.25}}};
  EXPECT_EQ(json_to_string(v), R"({"a":0.5,"b":500,"c":0.3333333333333333,"d":7,"s":"q\"x","l":[1,2.25]})");
  EXPECT_DOUBLE_EQ(json::parse(json_to_string(v)).at("c").as_double(), 1.0 / 3);
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock c(1000);
  EXPECT_EQ(c.now_us(), 1000);
  c.advance_seconds(1.5);
  EXPECT_EQ(c.now_us(), 1501000);
}

TEST(Strings, UrlWithoutSecretsKeepsOnlyWhereItPoints) {
  const std::pair<const char*, const char*> cases[] = {
      {"https://h.example/x/y.png", "https://h.example/x/y.png"},
      {"https://h.example/x.png?X-Amz-Signature=abc&X-Amz-Credential=k",
       "https://h.example/x.png?[redacted]"},
      {"https://user:pass@h.example:8443/hook?token=s3cret#frag",
       "https://[redacted]@h.example:8443/hook?[redacted]"},
      {"http://h.example/hook#token=s3cret", "http://h.example/hook#[redacted]"},
      {"http://h.example?token=s3cret", "http://h.example?[redacted]"},
      {"http://a@b@h.example/", "http://[redacted]@h.example/"},
      {"http://h.example", "http://h.example"},
      {"not a url?token=s3cret", "not a url?[redacted]"},
      {"", ""},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(url_without_secrets(in), want) << in;
}

}  // namespace imago
