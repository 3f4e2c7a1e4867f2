// Records a room's encoded media (encoded_media.h) as fragmented MP4 (H.264 + Opus) in a local
// file, muxed with libavformat as the packets arrive (docs/sessions.md, "Recordings"). Each video
// key frame starts a fragment and every fragment is flushed to the file when cut, so a process
// killed mid-session leaves a file that plays up to its last fragment. When the room ends (or
// the sink is removed) the trailer is written and `done` is called with the finished file, on the
// sink's own thread: the caller then writes it through the blob store (which works in cluster
// mode) and removes the local file.
//
// The room's media thread only queues packets (MediaSink must not block): the writer thread does
// the muxing. A queue past kMaxQueuedBytes (the disk stalled for seconds) drops packets rather
// than grow; the recording then has a gap and says so in the log.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "live/encoded_media.h"
#include "util/status.h"

namespace imago::live {

struct RecordingOutcome {
  Status status;  // not ok: nothing usable was recorded (no packet arrived, the muxer failed)
  std::string path;
  int64_t bytes = 0;
  int64_t duration_ms = 0;  // from the first packet kept to the end of the last
  int64_t video_packets = 0, audio_packets = 0;
  int64_t dropped_packets = 0;
};

// What a recording left on disk holds, read back with libavformat: its packets, its bytes and its
// duration (the latest end of a packet). For the fragmented file a killed process left behind
// (it has no trailer; every fragment flushed before the kill is there). kInvalidArgument when the
// file is not an MP4 libavformat reads or holds no packet.
Result<RecordingOutcome> probe_recording(const std::string& path);

class RecordingSink final : public MediaSink {
 public:
  static constexpr size_t kMaxQueuedBytes = 16 << 20;

  // Writes to `path` (created; its directory must exist). `done` runs once, on the sink's thread.
  RecordingSink(std::string path, std::function<void(const RecordingOutcome&)> done);
  ~RecordingSink() override;  // ends the recording if on_end() was not called, and joins
  RecordingSink(const RecordingSink&) = delete;
  RecordingSink& operator=(const RecordingSink&) = delete;

  void on_config(const CodecConfig& config) override;
  void on_packet(const std::shared_ptr<const EncodedPacket>& packet) override;
  void on_end() override;

  // Waits until the writer has muxed everything queued so far (tests; a crash test kills the
  // process right after).
  void flush_for_test();

 private:
  struct Item {
    enum class Kind { kConfig, kPacket, kEnd } kind;
    CodecConfig config;
    std::shared_ptr<const EncodedPacket> packet;
  };
  class Muxer;
  void push(Item item, size_t bytes);
  void run();

  const std::string path_;
  std::function<void(const RecordingOutcome&)> done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  size_t queued_bytes_ = 0;
  int64_t dropped_ = 0;
  bool ended_ = false;  // kEnd queued
  int64_t pushed_ = 0, muxed_ = 0;
  std::thread thread_;
};

}  // namespace imago::live
