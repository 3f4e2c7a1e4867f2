#include "auth/password.h"

#include <gtest/gtest.h>

namespace imago {
namespace {

TEST(Password, HashIsArgon2idWithDocumentedParametersAndVerifies) {
  auto h = hash_password("correct horse battery");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->rfind("$argon2id$v=19$m=19456,t=2,p=1$", 0), 0u) << *h;
  EXPECT_TRUE(verify_password("correct horse battery", *h));
  EXPECT_FALSE(verify_password("correct horse batterY", *h));
  EXPECT_FALSE(verify_password("", *h));
}

TEST(Password, SaltMakesEveryHashDifferent) {
  auto a = hash_password("same password here"), b = hash_password("same password here");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(Password, MalformedStoredHashNeverVerifies) {
  EXPECT_FALSE(verify_password("x", ""));
  EXPECT_FALSE(verify_password("x", "$argon2i$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"));
  EXPECT_FALSE(verify_password("x", "$argon2id$garbage"));
}

TEST(Password, NewPasswordRules) {
  EXPECT_FALSE(check_new_password("short").ok());
  EXPECT_FALSE(check_new_password("          ").ok());
  EXPECT_FALSE(check_new_password(std::string(257, 'a')).ok());
  EXPECT_TRUE(check_new_password("ten chars!").ok());
}

}  // namespace
}  // namespace imago
