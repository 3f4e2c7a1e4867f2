#include "auth/first_run.h"

#include "util/random.h"

namespace imago {

std::string mint_first_run_token(const TokenKeyring& keys, const std::string& account_id, int64_t now_s,
                                 int64_t lifetime_s) {
  TokenClaims c;
  c.api_key_id = "first-run";  // no api key minted it: the server did, at start-up
  c.subject = account_id;
  c.audience = std::string(kFirstRunAudience);
  c.issued_at = now_s;
  c.expires_at = now_s + lifetime_s;
  c.token_id = new_unique_id("frl");
  return sign_token(keys.current(), c);
}

Result<SignedIn> FirstRun::claim(std::string_view token, std::string_view email, std::string_view password,
                                 const std::string& client_ip) {
  auto claims = verify_token(keys_, token, kFirstRunAudience, clock_.now_s());
  if (!claims.ok()) return Status(Code::kUnauthenticated, "This first-run link is not valid or has expired");
  std::lock_guard lock(claim_mu_);
  auto existing = members_.list_members(claims->subject);
  if (!existing.ok()) return existing.status();
  if (!existing->empty()) {
    return Status(Code::kConflict,
                  "This first-run link was used already; sign in with the email chosen then");
  }
  auto member = auth_.create_member(claims->subject, email, password);
  if (!member.ok()) return member.status();
  int retry_after = 0;
  return auth_.sign_in(email, password, client_ip, &retry_after);
}

}  // namespace imago
