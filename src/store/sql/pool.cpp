#include "store/sql/pool.h"

namespace imago::sql {

Pool::Pool(Dialect dialect, std::string target, size_t max_connections, int retries)
    : dialect_(dialect),
      target_(std::move(target)),
      max_(std::max<size_t>(1, max_connections)),
      retries_(retries) {}

Pool::~Pool() = default;

Status Pool::open_first() {
  auto c = connect();
  if (!c.ok()) return c.status();
  std::lock_guard lock(mu_);
  idle_.push_back(c->get());
  all_.push_back(std::move(c).value());
  return Status::Ok();
}

PooledConnection* Pool::acquire() {
  std::unique_lock lock(mu_);
  while (true) {
    if (!idle_.empty()) {
      PooledConnection* c = idle_.back();
      idle_.pop_back();
      return c;
    }
    if (all_.size() + opening_ < max_) {
      ++opening_;
      lock.unlock();
      auto c = connect();
      lock.lock();
      --opening_;
      if (!c.ok()) {
        cv_.notify_one();  // the slot is free again
        throw Error(Error::Kind::kLost, c.status().message());
      }
      all_.push_back(std::move(c).value());
      return all_.back().get();
    }
    cv_.wait(lock);
  }
}

void Pool::release(PooledConnection* c) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(c);
  }
  cv_.notify_one();
}

Status Pool::transact(Tx kind, Work& work) {
  PooledConnection* c = nullptr;
  try {
    c = acquire();
  } catch (const Error& e) {
    return Status::Unavailable(std::string("database unavailable: ") + e.what());
  }
  struct Releaser {
    Pool* pool;
    PooledConnection* c;
    ~Releaser() { pool->release(c); }
  } releaser{this, c};
  for (int attempt = 0;; ++attempt) {
    // Once set, a lost connection may have committed: the outcome is unknown.
    bool committing = false;
    try {
      c->ready();
      const bool in_tx = c->begin(kind);
      committing = !in_tx;
      try {
        const bool roll_back = work(*c);
        if (in_tx) {
          committing = !roll_back;
          if (roll_back)
            c->rollback();
          else
            c->commit();
        }
        return Status::Ok();
      } catch (...) {
        if (in_tx) c->rollback();
        throw;
      }
    } catch (const Error& e) {
      const bool safe = e.kind() == Error::Kind::kRetry || (e.kind() == Error::Kind::kLost && !committing);
      if (safe && attempt < retries_) continue;
      // A unique or check constraint refused the write (a duplicate create that raced past its
      // check): the caller's conflict, never an internal error.
      if (e.kind() == Error::Kind::kConstraint)
        return Status::Conflict("The record already exists or conflicts with another");
      if (e.kind() == Error::Kind::kLost) {
        return Status::Unavailable(
            std::string(committing ? "database connection lost during commit (outcome unknown): "
                                   : "database unavailable: ") +
            e.what());
      }
      return Status::Internal(std::string("database error: ") + e.what());
    }
  }
}

}  // namespace imago::sql
