#include "auth/api_key.h"

#include <gtest/gtest.h>

#include <set>

namespace imago {
namespace {

TEST(ApiKey, GeneratedKeysAreWellFormedAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    auto k = generate_api_key();
    EXPECT_TRUE(api_key_well_formed(k.secret)) << k.secret;
    EXPECT_EQ(k.secret.rfind("imago_sk_", 0), 0u);
    EXPECT_EQ(k.material.hash_hex.size(), 64u);
    EXPECT_EQ(k.material.last4, k.secret.substr(k.secret.size() - 4));
    EXPECT_EQ(k.secret.substr(0, k.material.prefix.size()), k.material.prefix);
    EXPECT_TRUE(seen.insert(k.secret).second);
  }
}

TEST(ApiKey, ChecksumCatchesTyposAndGarbage) {
  auto k = generate_api_key().secret;
  std::string typo = k;
  typo[12] = typo[12] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(api_key_well_formed(typo));
  EXPECT_FALSE(api_key_well_formed(""));
  EXPECT_FALSE(api_key_well_formed("imago_sk_"));
  EXPECT_FALSE(api_key_well_formed(k.substr(1)));
  EXPECT_FALSE(api_key_well_formed("sk_" + k.substr(9)));
  std::string bad_char = k;
  bad_char[20] = '-';
  EXPECT_FALSE(api_key_well_formed(bad_char));
}

TEST(ApiKey, HashIsSha256OfTheSecret) {
  EXPECT_EQ(hash_api_key("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace imago
