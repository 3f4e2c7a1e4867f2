#include "avatar/clip.h"

#include <cmath>

#include "avatar/offline.h"
#include "avatar/renderer.h"
#include "avatar/video_writer.h"

namespace imago::avatar {

const std::vector<std::string>& gesture_names() {
  static const std::vector<std::string> names = {"mini_wave_hello", "talk_head_nod_subtle", "blow_kiss_heart",
                                                 "laugh_react", "idle_subtle"};
  return names;
}

namespace internal {

Result<OfflineResult> render_mp4(std::string_view imx_bytes, const OfflineRender& job,
                                 const std::string& out_path) {
  auto model = load_model(imx_bytes, job.width, job.height);
  if (!model.ok()) return model.status();
  RendererOptions opt;
  opt.audio_rate = 24000;
  auto r = Renderer::create(*model, opt);
  if (!r.ok()) return r.status();
  Renderer& rend = **r;
  double duration = job.min_duration_s;
  if (job.speech) {
    if (auto s = rend.push_audio(*job.speech, true); !s.ok()) return s;
    duration = std::max(duration, job.speech->duration_s() + job.tail_s);
  }
  if (!job.gesture.empty()) {
    if (auto s = rend.trigger_gesture(job.gesture, job.gesture_duration_s); !s.ok()) return s;
    double gd = job.gesture_duration_s > 0 ? job.gesture_duration_s : rend.gesture_default_s(job.gesture);
    duration = std::max(duration, gd);
  }
  if (duration <= 0) return Status::Invalid("nothing to render: give speech, a gesture or a duration");
  if (duration > 600) return Status::Invalid("render duration must be at most 600 s");
  int64_t frames = static_cast<int64_t>(std::ceil(duration * kFps - 1e-9));
  auto w = Mp4Writer::open(out_path, rend.width(), rend.height(), rend.audio_rate());
  if (!w.ok()) return w.status();
  Frame f;
  for (int64_t i = 0; i < frames; ++i) {
    rend.next_frame(f, true);
    if (auto s = (*w)->write(f); !s.ok()) return s;
  }
  if (auto s = (*w)->finish(); !s.ok()) return s;
  return OfflineResult{frames, frames / double(kFps)};
}

}  // namespace internal

Status render_gesture_clip(std::string_view imx_bytes, std::string_view gesture, double duration_s,
                           const std::string& out_mp4_path) {
  if (!(duration_s > 0) || duration_s > 120)
    return Status::Invalid("gesture clip duration must be in (0, 120] s");
  bool known = false;
  for (const auto& g : gesture_names()) known |= g == gesture;
  if (!known) return Status::Invalid("Unknown gesture " + std::string(gesture));
  internal::OfflineRender job;
  job.gesture = std::string(gesture);
  job.gesture_duration_s = duration_s;
  job.min_duration_s = duration_s;
  auto r = internal::render_mp4(imx_bytes, job, out_mp4_path);
  return r.ok() ? Status::Ok() : r.status();
}

Result<double> render_talking_video(std::string_view imx_bytes, const speech::Audio& speech,
                                    const std::string& out_mp4_path) {
  if (speech.samples.empty()) return Status::Invalid("the speech is empty");
  internal::OfflineRender job;
  job.speech = speech;
  auto r = internal::render_mp4(imx_bytes, job, out_mp4_path);
  if (!r.ok()) return r.status();
  return r->duration_s;
}

Result<speech::Audio> decode_speech(std::string_view bytes) {
  return internal::decode_speech_audio(bytes);
}

}  // namespace imago::avatar
