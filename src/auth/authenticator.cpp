#include "auth/authenticator.h"

#include "auth/api_key.h"
#include "util/crypto.h"

namespace imago {

Result<Principal> Authenticator::authenticate(std::string_view secret) {
  if (!api_key_well_formed(secret)) return Status(Code::kUnauthenticated, "malformed key");
  const std::string hash = hash_api_key(secret);
  auto owner = accounts_.find_active_key(hash);
  if (!owner.ok()) return owner.status();
  // The index lookup found the row; the final equality check runs in constant time so no code
  // path compares secret-derived bytes with an early exit.
  if (!constant_time_equal(owner->stored_hash, hash)) {
    return Status(Code::kUnauthenticated, "unknown key");
  }
  accounts_.touch_key(owner->key.id, clock_.now_s());
  Principal p;
  p.account_id = owner->account.id;
  p.account_name = owner->account.name;
  p.key_id = owner->key.id;
  p.key_alias = owner->key.alias;
  p.plan = owner->account.plan;
  p.custom_limits = owner->account.custom_limits;
  return p;
}

}  // namespace imago
