// MP4 writer: H.264 (libx264) video at 25 FPS + AAC audio, via libavcodec/libavformat.
// Private to src/avatar (offline render and gesture clips).
#pragma once
#include <memory>
#include <string>

#include "avatar/renderer.h"
#include "util/status.h"

namespace imago::avatar::internal {

class Mp4Writer {
 public:
  static Result<std::unique_ptr<Mp4Writer>> open(const std::string& path, int width, int height,
                                                 int audio_rate);
  ~Mp4Writer();
  // Appends one frame: its picture (must have an image) and its audio.
  Status write(const Frame& f);
  // Flushes the encoders and writes the trailer; the file is complete only after this.
  Status finish();

  struct Impl;

 private:
  explicit Mp4Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace imago::avatar::internal
