#include "conversation/recognizer_pool.h"

namespace imago::conversation {

RecognizerPool::RecognizerPool(RecognizerOptions options, size_t spares)
    : options_(std::move(options)), spares_(spares) {}

RecognizerPool::~RecognizerPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (loader_.joinable()) loader_.join();
}

void RecognizerPool::warm() {
  std::lock_guard lock(mu_);
  if (spares_ == 0 || stop_ || failure_) return;
  if (!loader_.joinable()) loader_ = std::thread([this] { loader_loop(); });
  cv_.notify_all();
}

Result<std::unique_ptr<Recognizer>> RecognizerPool::take(const std::function<bool()>& give_up) {
  if (spares_ == 0) return load();
  std::unique_lock lock(mu_);
  if (!loader_.joinable() && !stop_ && !failure_) loader_ = std::thread([this] { loader_loop(); });
  // The loader keeps loading while fewer than spares_ are ready, so waiting ends with a spare or a
  // failure; waiting for the load in progress is never slower than starting a second one (loads
  // are serialised inside Recognizer::create).
  const auto done = [&] { return !ready_.empty() || failure_ || stop_; };
  if (give_up) {
    while (!cv_.wait_for(lock, std::chrono::milliseconds(50), done)) {
      if (give_up()) return Status::Unavailable("gave up waiting for a recogniser");
    }
  } else {
    cv_.wait(lock, done);
  }
  if (!ready_.empty()) {
    auto r = std::move(ready_.back());
    ready_.pop_back();
    cv_.notify_all();  // the loader tops up
    return r;
  }
  if (failure_) return *failure_;
  lock.unlock();
  return load();  // stopping: no loader to wait for
}

Result<std::unique_ptr<Recognizer>> RecognizerPool::load() {
  ++loads_;
  return Recognizer::create(options_);
}

size_t RecognizerPool::ready() const {
  std::lock_guard lock(mu_);
  return ready_.size();
}

void RecognizerPool::loader_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || (ready_.size() < spares_ && !failure_); });
    if (stop_) return;
    lock.unlock();
    auto r = load();
    lock.lock();
    if (r.ok()) {
      ready_.push_back(std::move(r).value());
    } else {
      failure_ = r.status();
    }
    cv_.notify_all();
  }
}

}  // namespace imago::conversation
