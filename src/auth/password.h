// Member passwords: argon2id (libargon2) in the PHC string format, so the parameters travel with
// each hash and can be raised later without invalidating stored ones. See docs/dashboard.md.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace imago {

// OWASP's argon2id baseline: 19 MiB of memory, 2 passes, one lane. About 30 ms per hash on one
// core here, which bounds an online guesser far more than the sign-in throttle alone would.
struct PasswordParams {
  uint32_t memory_kib = 19 * 1024;
  uint32_t passes = 2;
  uint32_t lanes = 1;
};

// Rules for a new password: 10 to 256 bytes, not all whitespace.
Status check_new_password(std::string_view password);

// "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>" with a fresh 16-byte salt.
Result<std::string> hash_password(std::string_view password, const PasswordParams& params = {});
// Constant-time check of a password against a stored PHC string; false for malformed hashes.
bool verify_password(std::string_view password, const std::string& encoded);
// Spends the same time as a real verification, for unknown emails (no timing oracle).
void verify_password_decoy(std::string_view password);
// How many argon2 verifications (real and decoy) this process has run: what the sign-in throttle
// bounds, observable by its tests.
uint64_t password_verifications();

}  // namespace imago
