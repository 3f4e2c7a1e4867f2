#include "live/transcript_log.h"

#include <algorithm>

namespace imago::live {

int64_t TranscriptLog::ms_at(int64_t now_us) const {
  return std::max<int64_t>(0, (now_us - start_us_) / 1000);
}

TranscriptEntry TranscriptLog::add(std::string_view role, std::string_view source, std::string text,
                                   int64_t start_ms, int64_t end_ms) {
  std::lock_guard lock(mu_);
  TranscriptEntry e{++seq_,          std::string(role), std::string(source),
                    std::move(text), start_ms,          std::max(start_ms, end_ms)};
  pending_.push_back(e);
  if (pending_.size() > kMaxPending) pending_.erase(pending_.begin());
  return e;
}

std::vector<TranscriptEntry> TranscriptLog::take() {
  std::lock_guard lock(mu_);
  std::vector<TranscriptEntry> out;
  out.swap(pending_);
  return out;
}

void TranscriptLog::put_back(std::vector<TranscriptEntry> lines) {
  std::lock_guard lock(mu_);
  lines.insert(lines.end(), std::make_move_iterator(pending_.begin()),
               std::make_move_iterator(pending_.end()));
  pending_ = std::move(lines);
  if (pending_.size() > kMaxPending) pending_.erase(pending_.begin(), pending_.end() - kMaxPending);
}

int64_t TranscriptLog::lines() const {
  std::lock_guard lock(mu_);
  return seq_;
}

}  // namespace imago::live
