// The owner's first way into the dashboard: a one-time link that imagod prints on its first start
// (docs/dashboard.md, "First run"). The link carries a signed token (HS256 under the runtime-token
// keys, audience kFirstRunAudience) naming the account; whoever opens it chooses the account's
// first member's email and password and is signed in. The link stops working once the account
// has a member, so it is one-time without a table of its own, on one node or many.
#pragma once
#include <mutex>
#include <string>
#include <string_view>

#include "auth/members.h"
#include "auth/runtime_token.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

inline constexpr std::string_view kFirstRunAudience = "imago-first-run";
inline constexpr int64_t kFirstRunLinkLifetimeS = 24 * 3600;

// A token for the account's first-run link, valid for `lifetime_s`.
std::string mint_first_run_token(const TokenKeyring& keys, const std::string& account_id, int64_t now_s,
                                 int64_t lifetime_s = kFirstRunLinkLifetimeS);

class FirstRun {
 public:
  FirstRun(const TokenKeyring& keys, MemberStore& members, MemberAuth& auth, const Clock& clock)
      : keys_(keys), members_(members), auth_(auth), clock_(clock) {}

  // Makes the first member of the token's account and signs it in. kUnauthenticated for a token
  // that is not a valid, unexpired first-run token; kConflict once the account has a member (the
  // link was used); kInvalidArgument for a malformed email or a weak password (checked before
  // anything is written), as for any new member.
  Result<SignedIn> claim(std::string_view token, std::string_view email, std::string_view password,
                         const std::string& client_ip);

 private:
  const TokenKeyring& keys_;
  MemberStore& members_;
  MemberAuth& auth_;
  const Clock& clock_;
  // Two claims of one link on this node run one after the other, so only the first makes a
  // member. (Two nodes claiming in the same instant could both succeed; both callers held the
  // owner's link.)
  std::mutex claim_mu_;
};

}  // namespace imago
