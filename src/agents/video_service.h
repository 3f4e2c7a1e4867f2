// Talking videos over the API (docs/api/video.md): POST /v1/video/generate and GET
// /v1/video/{job_id}. The request is validated, its speech made (text with the agent's voice) or
// fetched (audio_url) and measured, the output minutes charged once, and a durable render job
// queued (src/jobs/video_render). No HTTP here: src/api/video.cpp parses and renders.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/status.h"

namespace imago {
class AgentStore;
class BlobStore;
class FileStore;
struct Job;
class JobStore;
class LedgerStore;
namespace fetch {
class Fetcher;
}
namespace speech {
class SpeechService;
}
}  // namespace imago

namespace imago::agents {

inline constexpr double kMaxVideoSeconds = 120;     // of output
inline constexpr size_t kMaxVideoTextChars = 5000;  // Unicode characters
inline constexpr int64_t kMaxVideoWaitMs = 90000;   // wait: true
// A waiting request holds an HTTP worker thread, so few may wait at once: beyond these, `wait`
// answers at once with the job still processing (the caller polls). docs/api/video.md.
inline constexpr int kMaxVideoWaitersPerNode = 4;
inline constexpr int kMaxVideoWaitersPerAccount = 1;

// POST /v1/video/generate, as parsed from the body (absent fields are nullopt).
struct VideoRequest {
  std::optional<std::string> agent_code;
  std::optional<std::string> input_type;  // "text" | "audio"
  std::optional<std::string> text, voice, audio_url;
  std::optional<std::string> idempotency_key;  // the Idempotency-Key header
  int64_t storage_quota_bytes = 0;             // the caller's quota (0: unlimited)
};

struct VideoJob {
  std::string job_id;
  std::string agent_code;
  std::string status;  // "processing" | "completed" | "failed"
  std::optional<std::string> video_url;
  std::optional<std::string> error;
  double duration_s = 0;   // of the output
  int64_t credits = 0;     // charged (refunded when failed)
  int64_t created_at = 0;  // Unix seconds, when it was queued
  bool replayed = false;   // an earlier request with the same Idempotency-Key made it
};

// The newest kMaxListedVideos videos of an account are listed (GET /v1/video).
inline constexpr int kMaxListedVideos = 1000;

struct VideoPage {
  std::vector<VideoJob> videos;  // newest first
  int64_t total = 0;
};

struct VideoServiceDeps {
  AgentStore* agents = nullptr;
  FileStore* files = nullptr;
  BlobStore* blobs = nullptr;
  JobStore* jobs = nullptr;
  LedgerStore* ledger = nullptr;
  speech::SpeechService* speech = nullptr;
  fetch::Fetcher* fetcher = nullptr;
  Clock* clock = nullptr;
  const std::string* public_url = nullptr;
  std::function<void()> wake_workers;
};

class VideoService {
 public:
  explicit VideoService(VideoServiceDeps deps) : d_(std::move(deps)) {}

  // Validates, makes the speech, charges and queues. kInvalidArgument (nothing charged) for bad
  // input, kNotFound for an unknown agent, kInsufficientFunds when the balance is short.
  Result<VideoJob> start(const std::string& account_id, const VideoRequest& r);
  Result<VideoJob> get(const std::string& account_id, const std::string& job_id);
  // The account's videos, newest first, of one agent when `agent_code` is not empty (among the
  // newest kMaxListedVideos of the account).
  Result<VideoPage> list(const std::string& account_id, const std::string& agent_code, int limit, int offset);
  // Polls until the job is no longer processing or `timeout_ms` passed; returns its state. When
  // kMaxVideoWaitersPerNode requests (or kMaxVideoWaitersPerAccount of this account) already
  // wait, returns the current state at once. shutdown() ends every wait.
  Result<VideoJob> wait(const std::string& account_id, const std::string& job_id, int64_t timeout_ms);
  void shutdown() { stop_.raise(); }
  int waiting() {
    std::lock_guard lock(waiters_mu_);
    return waiters_;
  }

 private:
  VideoJob view_of(const Job& j) const;

  VideoServiceDeps d_;
  Interrupt stop_;
  std::mutex waiters_mu_;
  int waiters_ = 0;
  std::map<std::string, int> waiters_by_account_;
};

}  // namespace imago::agents
