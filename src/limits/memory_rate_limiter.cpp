// In-process limiter state for the single-node server. Sharded maps keep lock contention low
// across I/O threads; stale entries are swept so memory stays bounded by active clients.
#include <array>
#include <cmath>
#include <mutex>
#include <unordered_map>

#include "limits/rate_limiter.h"
#include "limits/token_bucket.h"

namespace imago {

namespace {

constexpr size_t kShards = 16;

template <typename V>
struct Shard {
  std::mutex mu;
  std::unordered_map<std::string, V> map;
  size_t ops = 0;
};

size_t shard_of(const std::string& key) {
  return std::hash<std::string>{}(key) % kShards;
}

class MemoryRateLimiter final : public RateLimiter {
 public:
  explicit MemoryRateLimiter(Clock& clock) : clock_(clock) {}

  RateDecision take(const std::string& key, int per_minute) override {
    const int64_t now = clock_.now_us();
    const double capacity = per_minute;
    const double rate = per_minute / 60.0;
    auto& shard = shards_[shard_of(key)];
    BucketDecision d;
    {
      std::lock_guard lock(shard.mu);
      if (++shard.ops % 4096 == 0) sweep(shard, now);
      d = take_token(shard.map[key], capacity, rate, now);
    }
    RateDecision out;
    out.allowed = d.allowed;
    out.limit = per_minute;
    out.remaining = static_cast<int>(std::floor(d.tokens + 1e-9));
    out.reset_unix_s = static_cast<int64_t>(std::ceil((now + d.full_in_us) / 1e6));
    if (!d.allowed) out.retry_after_s = std::max<int>(1, static_cast<int>(std::ceil(d.retry_after_us / 1e6)));
    return out;
  }

 private:
  // A bucket untouched for two minutes is full again (every limit refills within one): forget it.
  static void sweep(Shard<BucketState>& shard, int64_t now) {
    for (auto it = shard.map.begin(); it != shard.map.end();) {
      if (now - it->second.updated_us > 120'000'000)
        it = shard.map.erase(it);
      else
        ++it;
    }
  }

  Clock& clock_;
  std::array<Shard<BucketState>, kShards> shards_;
};

struct Window {
  int64_t opened_us = 0;
  int count = 0;
};

class MemoryWindowCounter final : public WindowCounter {
 public:
  explicit MemoryWindowCounter(Clock& clock) : clock_(clock) {}

  WindowDecision peek(const std::string& key, int limit, int window_s) override {
    return apply(key, limit, window_s, false);
  }
  WindowDecision hit(const std::string& key, int limit, int window_s) override {
    return apply(key, limit, window_s, true);
  }
  void release(const std::string& key, int window_s) override {
    const int64_t now = clock_.now_us();
    const int64_t len = static_cast<int64_t>(window_s) * 1'000'000;
    auto& shard = shards_[shard_of(key)];
    std::lock_guard lock(shard.mu);
    auto it = shard.map.find(key);
    if (it == shard.map.end() || now - it->second.opened_us >= len) return;
    if (it->second.count > 0) --it->second.count;
  }

 private:
  WindowDecision apply(const std::string& key, int limit, int window_s, bool count) {
    const int64_t now = clock_.now_us();
    const int64_t len = static_cast<int64_t>(window_s) * 1'000'000;
    auto& shard = shards_[shard_of(key)];
    std::lock_guard lock(shard.mu);
    if (++shard.ops % 4096 == 0) {
      for (auto it = shard.map.begin(); it != shard.map.end();) {
        if (now - it->second.opened_us >= len)
          it = shard.map.erase(it);
        else
          ++it;
      }
    }
    auto it = shard.map.find(key);
    if (it != shard.map.end() && now - it->second.opened_us >= len) {
      shard.map.erase(it);
      it = shard.map.end();
    }
    if (it == shard.map.end()) {
      if (!count) return {};
      it = shard.map.emplace(key, Window{now, 0}).first;
    }
    Window& w = it->second;
    WindowDecision d;
    if (count) {
      ++w.count;
      d.blocked = w.count > limit;
    } else {
      d.blocked = w.count >= limit;
    }
    d.count = w.count;
    if (d.blocked) {
      int64_t left = w.opened_us + len - now;
      d.retry_after_s = std::max<int>(1, static_cast<int>((left + 999'999) / 1'000'000));
    }
    return d;
  }

  Clock& clock_;
  std::array<Shard<Window>, kShards> shards_;
};

}  // namespace

std::unique_ptr<RateLimiter> make_memory_rate_limiter(Clock& clock) {
  return std::make_unique<MemoryRateLimiter>(clock);
}
std::unique_ptr<WindowCounter> make_memory_window_counter(Clock& clock) {
  return std::make_unique<MemoryWindowCounter>(clock);
}

}  // namespace imago
