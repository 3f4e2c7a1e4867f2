#include "auth/password.h"

#include <argon2.h>

#include <atomic>
#include <vector>

#include "util/random.h"

namespace imago {

namespace {
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;
}  // namespace

Status check_new_password(std::string_view password) {
  if (password.size() < 10) return Status::Invalid("The password must be at least 10 characters long");
  if (password.size() > 256) return Status::Invalid("The password must be at most 256 characters long");
  bool all_space = true;
  for (char c : password) {
    if (c != ' ' && c != '\t') all_space = false;
  }
  if (all_space) return Status::Invalid("The password must not be only spaces");
  return Status::Ok();
}

Result<std::string> hash_password(std::string_view password, const PasswordParams& p) {
  const std::string salt = random_bytes(kSaltBytes);
  const size_t len = argon2_encodedlen(p.passes, p.memory_kib, p.lanes, kSaltBytes, kHashBytes, Argon2_id);
  std::vector<char> out(len);
  int rc = argon2id_hash_encoded(p.passes, p.memory_kib, p.lanes, password.data(), password.size(),
                                 salt.data(), salt.size(), kHashBytes, out.data(), out.size());
  if (rc != ARGON2_OK) return Status::Internal(std::string("argon2: ") + argon2_error_message(rc));
  return std::string(out.data());
}

namespace {
std::atomic<uint64_t> verifications{0};
}  // namespace

uint64_t password_verifications() {
  return verifications.load();
}

bool verify_password(std::string_view password, const std::string& encoded) {
  if (encoded.rfind("$argon2id$", 0) != 0) return false;
  verifications.fetch_add(1);
  return argon2id_verify(encoded.c_str(), password.data(), password.size()) == ARGON2_OK;
}

void verify_password_decoy(std::string_view password) {
  // A hash of a random password made once with the current parameters.
  static const std::string decoy = hash_password(random_base62(24)).value();
  (void)verify_password(password, decoy);
}

}  // namespace imago
