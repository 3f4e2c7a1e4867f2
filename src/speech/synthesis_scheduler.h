// Fair scheduling of speech synthesis between accounts (docs/speech.md, "Scheduling").
//
// espeak-ng runs one sentence at a time per process, so synthesis time is the shared resource.
// The scheduler hands it out one sentence (a slice) at a time: a task goes back to its account's
// queue after each sentence, accounts with ready tasks are served round robin, and a higher
// priority class (live rooms, then interactive HTTP, then batch renders) is always served first.
// An account that had nothing ready goes before the round (like a new flow in fq_codel): it has
// not been served lately, and its first sentence, often its only one, waits for no full round.
// One account's 30 long requests therefore delay another account's one-sentence request by about
// one sentence per busy worker, not by the whole backlog.
//
// The scheduler only orders abstract tasks: it knows nothing of espeak, so it is unit-tested on
// its own. It is not thread-safe; the speech service calls it under its own mutex.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "util/status.h"

namespace imago::speech {

// Lower value goes first.
enum class SynthesisPriority : int {
  kLive = 0,         // a live room's reply: someone is waiting in real time
  kInteractive = 1,  // POST /v1/tts, /v1/audio/speech, studio previews
  kBatch = 2,        // video renders, `imagod render`
};
inline constexpr int kSynthesisPriorities = 3;

// Who asks for synthesis: the account whose share it uses, and how urgent it is.
struct SynthesisRequester {
  std::string account_id;  // empty: the server itself (tools, tests); one shared share
  SynthesisPriority priority = SynthesisPriority::kInteractive;
};

struct SchedulerLimits {
  // Tasks admitted at once (waiting or being synthesized); beyond it kUnavailable (503 TTS_BUSY).
  int capacity = 66;
  // Tasks one account may have admitted at once, live ones excepted (a room speaks one reply at
  // a time, and rooms are capped per account); beyond it kResourceExhausted (429).
  int per_account = 8;
};

// A unit of work: one request's remaining sentences. The service derives its job from it.
struct SynthesisTask {
  virtual ~SynthesisTask() = default;
  SynthesisRequester requester;
};

class SynthesisScheduler {
 public:
  explicit SynthesisScheduler(SchedulerLimits limits) : limits_(limits) {}

  // Admits `task` and queues it behind its account's ready tasks. kUnavailable when `capacity`
  // tasks are admitted; kResourceExhausted when its account holds its `per_account` share.
  Status admit(std::shared_ptr<SynthesisTask> task);

  // The task whose next slice runs now, removed from its queue (nullptr when none is ready):
  // the highest priority class with ready work, within it an account that has just become ready
  // (admitted with nothing else ready), else the next account in round-robin order, within the
  // account its tasks in turn. The caller then requeue()s or retire()s it.
  std::shared_ptr<SynthesisTask> next();
  // Back behind its account's other ready tasks after a slice, with more slices to run.
  void requeue(std::shared_ptr<SynthesisTask> task);
  // Done (finished, failed or cancelled): frees its admission.
  void retire(const SynthesisTask& task);

  bool has_ready() const { return ready_ > 0; }
  int ready() const { return ready_; }        // tasks waiting for their next slice
  int admitted() const { return admitted_; }  // ready + running slices
  int admitted_by(const std::string& account_id) const;
  // Every ready task, dropped from the queues (shutdown).
  std::deque<std::shared_ptr<SynthesisTask>> drain();

 private:
  struct AccountQueue {
    std::deque<std::shared_ptr<SynthesisTask>> tasks;
    bool listed = false;  // in `fresh` or `ring`
  };
  struct PriorityClass {
    std::map<std::string, AccountQueue> accounts;
    std::deque<std::string> fresh;  // accounts that became ready on admission: served first
    std::deque<std::string> ring;   // the other accounts with ready tasks, in serving order
  };
  void push(std::shared_ptr<SynthesisTask> task, bool admitted);

  SchedulerLimits limits_;
  PriorityClass classes_[kSynthesisPriorities];
  std::map<std::string, int> admitted_by_account_;  // non-live tasks per account
  int ready_ = 0;
  int admitted_ = 0;
};

}  // namespace imago::speech
