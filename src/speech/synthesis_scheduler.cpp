#include "speech/synthesis_scheduler.h"

namespace imago::speech {

namespace {
bool counts_per_account(const SynthesisTask& t) {
  return t.requester.priority != SynthesisPriority::kLive;
}
}  // namespace

Status SynthesisScheduler::admit(std::shared_ptr<SynthesisTask> task) {
  if (admitted_ >= limits_.capacity) {
    return Status::Unavailable("speech synthesis queue is full; retry shortly");
  }
  if (counts_per_account(*task)) {
    int& mine = admitted_by_account_[task->requester.account_id];
    if (mine >= limits_.per_account) {
      return {Code::kRateLimited, "this account already has " + std::to_string(mine) +
                                      " speech requests in progress (its share of the synthesizer); "
                                      "retry when one finishes"};
    }
    ++mine;
  }
  ++admitted_;
  push(std::move(task), true);
  return Status::Ok();
}

void SynthesisScheduler::push(std::shared_ptr<SynthesisTask> task, bool admitted) {
  PriorityClass& pc = classes_[static_cast<int>(task->requester.priority)];
  AccountQueue& q = pc.accounts[task->requester.account_id];
  if (!q.listed) {
    q.listed = true;
    // A requeued task goes to the back of the round even when it is its account's only one, so
    // an account never keeps the front by being served.
    (admitted ? pc.fresh : pc.ring).push_back(task->requester.account_id);
  }
  q.tasks.push_back(std::move(task));
  ++ready_;
}

std::shared_ptr<SynthesisTask> SynthesisScheduler::next() {
  for (PriorityClass& pc : classes_) {
    std::deque<std::string>& from = pc.fresh.empty() ? pc.ring : pc.fresh;
    if (from.empty()) continue;
    std::string account = std::move(from.front());
    from.pop_front();
    auto it = pc.accounts.find(account);
    AccountQueue& q = it->second;
    std::shared_ptr<SynthesisTask> task = std::move(q.tasks.front());
    q.tasks.pop_front();
    --ready_;
    if (q.tasks.empty()) {
      pc.accounts.erase(it);  // an idle account costs nothing
    } else {
      pc.ring.push_back(std::move(account));
    }
    return task;
  }
  return nullptr;
}

void SynthesisScheduler::requeue(std::shared_ptr<SynthesisTask> task) {
  push(std::move(task), false);
}

void SynthesisScheduler::retire(const SynthesisTask& task) {
  --admitted_;
  if (!counts_per_account(task)) return;
  auto it = admitted_by_account_.find(task.requester.account_id);
  if (it != admitted_by_account_.end() && --it->second <= 0) admitted_by_account_.erase(it);
}

int SynthesisScheduler::admitted_by(const std::string& account_id) const {
  auto it = admitted_by_account_.find(account_id);
  return it == admitted_by_account_.end() ? 0 : it->second;
}

std::deque<std::shared_ptr<SynthesisTask>> SynthesisScheduler::drain() {
  std::deque<std::shared_ptr<SynthesisTask>> out;
  while (auto t = next()) out.push_back(std::move(t));
  return out;
}

}  // namespace imago::speech
