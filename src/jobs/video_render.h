// Talking videos (POST /v1/video/generate, docs/api/video.md): the render job and the stored form
// of its speech. The request side (src/agents/video_service) synthesizes or fetches the speech,
// charges and queues; this job renders the MP4, stores it as a file and refunds on failure.
#pragma once
#include <string>
#include <string_view>

#include "core/services.h"
#include "jobs/job_workers.h"
#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::jobs {

// Speech kept between the request and the job (a blob), phoneme timing included so the render
// lip-syncs from phonemes rather than the envelope: a JSON header line, then 16-bit PCM.
std::string encode_speech_blob(const speech::Audio& a);
Result<speech::Audio> decode_speech_blob(std::string_view bytes);

// The file id of a video job's MP4 (one per job, so a retried attempt overwrites, never adds).
std::string video_file_id(const std::string& job_id);

class VideoRenderHandler final : public JobHandler {
 public:
  explicit VideoRenderHandler(Services d) : d_(std::move(d)) {}
  JobStep run(JobContext& ctx) override;
  void give_up(JobContext& ctx, const std::string& reason) override;
  Backoff backoff() const override { return {3000, 3, 5 * 60 * 1000}; }

 private:
  // Closes the job as failed and refunds its charge (once: the refund key derives from the charge).
  void fail(JobContext& ctx, const std::string& message);
  Services d_;
};

}  // namespace imago::jobs
