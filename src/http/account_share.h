// A per-account cap on requests in progress: how many of a pool's threads one account may hold
// at once. The outbound pool (URL uploads, webhook registration and test pings: handlers that
// wait on other hosts) uses it so that one account pointing at slow hosts cannot occupy every
// outbound thread; past its share the account gets 503 with Retry-After while other accounts are
// still served (docs/http.md, "Handler pools").
#pragma once
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace imago::http {

class AccountShare {
 public:
  // At most `per_account` requests of one account in progress (at least 1).
  explicit AccountShare(int per_account);

  // Held while a request runs; releases its place on destruction. Empty when refused.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : share_(o.share_), account_(std::move(o.account_)) { o.share_ = nullptr; }
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    explicit operator bool() const { return share_ != nullptr; }
    void release();

   private:
    friend class AccountShare;
    Lease(AccountShare* s, std::string account) : share_(s), account_(std::move(account)) {}
    AccountShare* share_ = nullptr;
    std::string account_;
  };

  // A place for `account`, or an empty Lease when it already has per_account() in progress.
  Lease try_acquire(const std::string& account);
  int per_account() const { return per_account_; }
  int in_progress(const std::string& account) const;

 private:
  void release(const std::string& account);
  const int per_account_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> running_;
};

}  // namespace imago::http
