#include "http/account_share.h"

#include <algorithm>

namespace imago::http {

AccountShare::AccountShare(int per_account) : per_account_(std::max(1, per_account)) {}

AccountShare::Lease& AccountShare::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release();
    share_ = o.share_;
    account_ = std::move(o.account_);
    o.share_ = nullptr;
  }
  return *this;
}

void AccountShare::Lease::release() {
  if (share_) share_->release(account_);
  share_ = nullptr;
}

AccountShare::Lease AccountShare::try_acquire(const std::string& account) {
  std::lock_guard lock(mu_);
  int& n = running_[account];
  if (n >= per_account_) return Lease();
  ++n;
  return Lease(this, account);
}

int AccountShare::in_progress(const std::string& account) const {
  std::lock_guard lock(mu_);
  auto it = running_.find(account);
  return it == running_.end() ? 0 : it->second;
}

void AccountShare::release(const std::string& account) {
  std::lock_guard lock(mu_);
  auto it = running_.find(account);
  if (it != running_.end() && --it->second <= 0) running_.erase(it);
}

}  // namespace imago::http
