// A talking video's speech between the request (agents/video_service) and the render job
// (jobs/video_render): a blob with a JSON header line (sample rate, phoneme and word timing, so the
// render lip-syncs from phonemes rather than the envelope), then 16-bit little-endian PCM.
#pragma once
#include <string>
#include <string_view>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::agents {

std::string encode_speech_blob(const speech::Audio& a);
Result<speech::Audio> decode_speech_blob(std::string_view bytes);

// The file id of a video job's MP4 (one per job, so a retried attempt overwrites, never adds).
std::string video_file_id(const std::string& job_id);

}  // namespace imago::agents
