// Recognisers loaded ahead of need, so a viewer's first words are not held up by model loading.
// Loading one (Recognizer::create) reads tens of MB of models: a few hundred ms of CPU on a quiet
// machine and seconds on a busy one, and a session that loaded its own on its first microphone
// audio answered its first question that much later. The pool keeps `spares` fresh recognisers
// ready; a session takes one and a background thread loads the next.
//
// Recognisers are not returned: a used decoder has adapted its cepstral mean to the last viewer's
// microphone, and the next viewer should start from the model's own.
//
// Thread-safe. Nothing is loaded until the first warm() or take(), so a node whose viewers never
// talk holds no models.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "conversation/recognizer.h"
#include "util/status.h"

namespace imago::conversation {

class RecognizerPool {
 public:
  explicit RecognizerPool(RecognizerOptions options = {}, size_t spares = 1);
  // Waits for a load in progress (it cannot be interrupted), then frees the spares.
  ~RecognizerPool();
  RecognizerPool(const RecognizerPool&) = delete;
  RecognizerPool& operator=(const RecognizerPool&) = delete;

  // Starts loading spares in the background until `spares` are ready. Cheap when they are: call it
  // when a session that may listen starts, before its viewer speaks.
  void warm();

  // A fresh recogniser: a ready spare, else the one being loaded (waited for), else one loaded on
  // the calling thread. The spares are topped up in the background. kUnavailable when the models
  // are missing (remembered: the pool does not retry). `give_up`, when set, is asked about every
  // 50 ms while waiting: true ends the wait with kUnavailable (a session that stops meanwhile
  // must not wait for a load, which takes seconds on a busy machine).
  Result<std::unique_ptr<Recognizer>> take(const std::function<bool()>& give_up = {});

  // Spares ready now, and loads begun so far (for tests and metrics).
  size_t ready() const;
  size_t loads() const { return loads_.load(); }

 private:
  void loader_loop();
  Result<std::unique_ptr<Recognizer>> load();  // counted in loads_

  const RecognizerOptions options_;
  const size_t spares_;

  mutable std::mutex mu_;
  std::condition_variable cv_;  // loader: demand or stop; takers: a spare loaded or a failure
  std::vector<std::unique_ptr<Recognizer>> ready_;
  std::optional<Status> failure_;  // the models could not be loaded
  bool stop_ = false;
  std::atomic<size_t> loads_{0};
  std::thread loader_;  // started by the first warm() or take()
};

}  // namespace imago::conversation
