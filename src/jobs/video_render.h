// Talking videos (POST /v1/video/generate, docs/api/video.md): the render job (the stored form of
// its speech is agents/video_speech.h). The request side (src/agents/video_service) synthesizes or fetches
// the speech, charges and queues; this job renders the MP4, stores it as a file and refunds on failure.
#pragma once

#include "core/services.h"
#include "jobs/job_workers.h"
#include "util/status.h"

namespace imago::jobs {

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
