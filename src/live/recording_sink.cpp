#include "live/recording_sink.h"

#include <cstring>
#include <filesystem>

#include "util/log.h"
#include "util/thread_name.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

namespace imago::live {

namespace {

std::string av_error(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

bool set_extradata(AVCodecParameters* par, const std::string& bytes) {
  par->extradata = static_cast<uint8_t*>(av_mallocz(bytes.size() + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!par->extradata) return false;
  std::memcpy(par->extradata, bytes.data(), bytes.size());
  par->extradata_size = static_cast<int>(bytes.size());
  return true;
}

}  // namespace

// One MP4 file being written: libavformat's mp4 muxer in fragmented mode.
class RecordingSink::Muxer {
 public:
  ~Muxer() { abandon(); }

  Status open(const std::string& path, const CodecConfig& c) {
    if (avformat_alloc_output_context2(&oc_, nullptr, "mp4", path.c_str()) < 0 || !oc_) {
      return Status::Internal("no mp4 muxer");
    }
    if (!c.avcc.empty() && c.width > 0 && c.height > 0) {
      video_ = avformat_new_stream(oc_, nullptr);
      if (!video_) return Status::Internal("no video stream");
      AVCodecParameters* p = video_->codecpar;
      p->codec_type = AVMEDIA_TYPE_VIDEO;
      p->codec_id = AV_CODEC_ID_H264;
      p->width = c.width;
      p->height = c.height;
      p->bit_rate = c.video_bitrate;
      if (!set_extradata(p, c.avcc)) return Status::Internal("out of memory");
      video_->time_base = AVRational{1, 90000};
      video_->avg_frame_rate = AVRational{c.fps > 0 ? c.fps : 25, 1};
    }
    if (!c.opus_head.empty()) {
      audio_ = avformat_new_stream(oc_, nullptr);
      if (!audio_) return Status::Internal("no audio stream");
      AVCodecParameters* p = audio_->codecpar;
      p->codec_type = AVMEDIA_TYPE_AUDIO;
      p->codec_id = AV_CODEC_ID_OPUS;
      p->sample_rate = c.audio_sample_rate;
      av_channel_layout_default(&p->ch_layout, c.audio_channels > 0 ? c.audio_channels : 1);
      p->bit_rate = c.audio_bitrate;
      p->frame_size = p->sample_rate / 50;  // one 20 ms packet
      if (!set_extradata(p, c.opus_head)) return Status::Internal("out of memory");
      audio_->time_base = AVRational{1, c.audio_sample_rate > 0 ? c.audio_sample_rate : 48000};
    }
    if (!video_ && !audio_) return Status::Invalid("the configuration names neither video nor audio");
    if (int rc = avio_open(&oc_->pb, path.c_str(), AVIO_FLAG_WRITE); rc < 0) {
      return Status::Internal("opening " + path + ": " + av_error(rc));
    }
    // Fragmented: a moov without samples first, then a fragment per video key frame (each second
    // without video), each flushed when cut, so the file plays up to the last whole fragment.
    AVDictionary* opts = nullptr;
    av_dict_set(&opts, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0);
    if (!video_) av_dict_set(&opts, "frag_duration", "1000000", 0);
    oc_->flags |= AVFMT_FLAG_FLUSH_PACKETS;
    const int rc = avformat_write_header(oc_, &opts);
    av_dict_free(&opts);
    if (rc < 0) return Status::Internal("mp4 header: " + av_error(rc));
    header_ = true;
    return Status::Ok();
  }

  // False when the packet was not written (no stream for it, before the first key frame, or
  // before the recording's first packet).
  bool write(const EncodedPacket& p) {
    AVStream* st = p.kind == MediaKind::kVideo ? video_ : audio_;
    if (!st) return false;
    const bool key = (p.flags & kFlagKeyFrame) != 0;
    if (st == video_ && !video_started_) {
      if (!key) return false;  // a recording switched on mid-session starts at a key frame
      video_started_ = true;
    }
    if (base_us_ < 0) base_us_ = p.pts_us;
    if (p.pts_us < base_us_) return false;
    int64_t& last = st == video_ ? last_video_us_ : last_audio_us_;
    if (p.pts_us <= last) return false;  // timestamps must grow per stream
    last = p.pts_us;
    AVPacket* pkt = av_packet_alloc();
    if (!pkt || av_new_packet(pkt, static_cast<int>(p.data.size())) < 0) {
      av_packet_free(&pkt);
      return false;
    }
    std::memcpy(pkt->data, p.data.data(), p.data.size());
    const AVRational us{1, 1'000'000};
    pkt->stream_index = st->index;
    pkt->pts = pkt->dts = av_rescale_q(p.pts_us - base_us_, us, st->time_base);
    pkt->duration = av_rescale_q(p.duration_us, us, st->time_base);
    if (key || st == audio_) pkt->flags |= AV_PKT_FLAG_KEY;
    // Not interleaved: each track's samples go into the current fragment as they come, and the
    // tracks need no waiting for each other (a voice session has no video at all).
    const int rc = av_write_frame(oc_, pkt);
    av_packet_free(&pkt);
    if (rc < 0) {
      if (!write_error_logged_) log::warn("recording_write_failed", {{"error", av_error(rc)}});
      write_error_logged_ = true;
      return false;
    }
    end_us_ = std::max(end_us_, p.pts_us - base_us_ + p.duration_us);
    return true;
  }

  Status finish() {
    if (!oc_) return Status::Internal("not open");
    int rc = header_ ? av_write_trailer(oc_) : 0;
    abandon();
    if (rc < 0) return Status::Internal("mp4 trailer: " + av_error(rc));
    return Status::Ok();
  }

  int64_t duration_ms() const { return end_us_ / 1000; }

 private:
  void abandon() {
    if (!oc_) return;
    if (oc_->pb) avio_closep(&oc_->pb);
    avformat_free_context(oc_);
    oc_ = nullptr;
    video_ = audio_ = nullptr;
  }

  AVFormatContext* oc_ = nullptr;
  AVStream* video_ = nullptr;
  AVStream* audio_ = nullptr;
  bool header_ = false;
  bool video_started_ = false;
  bool write_error_logged_ = false;
  int64_t base_us_ = -1;
  int64_t last_video_us_ = -1, last_audio_us_ = -1;
  int64_t end_us_ = 0;
};

RecordingSink::RecordingSink(std::string path, std::function<void(const RecordingOutcome&)> done)
    : path_(std::move(path)), done_(std::move(done)) {
  thread_ = std::thread([this] {
    name_this_thread("recording");
    run();
  });
}

RecordingSink::~RecordingSink() {
  on_end();
  if (thread_.joinable()) thread_.join();
}

void RecordingSink::on_config(const CodecConfig& config) {
  push(Item{Item::Kind::kConfig, config, nullptr}, config.avcc.size() + config.opus_head.size());
}

void RecordingSink::on_packet(const std::shared_ptr<const EncodedPacket>& packet) {
  if (packet) push(Item{Item::Kind::kPacket, {}, packet}, packet->data.size());
}

void RecordingSink::on_end() {
  push(Item{Item::Kind::kEnd, {}, nullptr}, 0);
}

void RecordingSink::push(Item item, size_t bytes) {
  {
    std::lock_guard lock(mu_);
    if (ended_) return;
    if (item.kind == Item::Kind::kEnd) ended_ = true;
    if (item.kind == Item::Kind::kPacket && queued_bytes_ + bytes > kMaxQueuedBytes) {
      ++dropped_;
      return;
    }
    queued_bytes_ += bytes;
    ++pushed_;
    queue_.push_back(std::move(item));
  }
  cv_.notify_all();
}

void RecordingSink::flush_for_test() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return muxed_ == pushed_; });
}

void RecordingSink::run() {
  Muxer mux;
  bool open = false;
  Status failure;
  RecordingOutcome out;
  out.path = path_;
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty(); });
      item = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= item.kind == Item::Kind::kPacket ? item.packet->data.size()
                       : item.kind == Item::Kind::kConfig
                           ? item.config.avcc.size() + item.config.opus_head.size()
                           : 0;
    }
    if (item.kind == Item::Kind::kConfig) {
      if (!open && failure.ok()) {
        failure = mux.open(path_, item.config);
        open = failure.ok();
      } else if (open) {
        // One file has one configuration; packets that no longer match it are the encoder's
        // concern (it keeps its configuration for a session).
        log::warn("recording_config_changed", {{"path", path_}});
      }
    } else if (item.kind == Item::Kind::kPacket) {
      const bool written = open && mux.write(*item.packet);
      if (written) {
        (item.packet->kind == MediaKind::kVideo ? out.video_packets : out.audio_packets) += 1;
      }
    }
    const bool end = item.kind == Item::Kind::kEnd;
    if (end) {
      Status finished = open ? mux.finish() : Status::Ok();
      {
        std::lock_guard lock(mu_);
        out.dropped_packets = dropped_;
      }
      out.duration_ms = mux.duration_ms();
      std::error_code ec;
      out.bytes = static_cast<int64_t>(std::filesystem::file_size(path_, ec));
      if (ec) out.bytes = 0;
      if (!failure.ok()) {
        out.status = failure;
      } else if (!finished.ok()) {
        out.status = finished;
      } else if (!open || out.video_packets + out.audio_packets == 0) {
        out.status = Status::NotFound("no media arrived for the recording");
      }
      if (out.dropped_packets > 0)
        log::warn("recording_dropped_packets", {{"path", path_}, {"dropped", out.dropped_packets}});
    }
    {
      std::lock_guard lock(mu_);
      ++muxed_;
    }
    cv_.notify_all();
    if (end) {
      if (done_) done_(out);
      return;
    }
  }
}

Result<RecordingOutcome> probe_recording(const std::string& path) {
  AVFormatContext* ic = nullptr;
  if (int rc = avformat_open_input(&ic, path.c_str(), nullptr, nullptr); rc < 0)
    return Status::Invalid("cannot read " + path + ": " + av_error(rc));
  RecordingOutcome o;
  o.path = path;
  std::error_code ec;
  o.bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  int64_t start_us = INT64_MAX, end_us = INT64_MIN;
  AVPacket* pkt = av_packet_alloc();
  // A cut last fragment ends the reading with an error; what came before it is the recording.
  while (pkt && av_read_frame(ic, pkt) >= 0) {
    const AVStream* st = ic->streams[pkt->stream_index];
    if (pkt->pts != AV_NOPTS_VALUE) {
      const AVRational us{1, 1'000'000};
      const int64_t at = av_rescale_q(pkt->pts, st->time_base, us);
      start_us = std::min(start_us, at);
      end_us = std::max(end_us, at + av_rescale_q(pkt->duration, st->time_base, us));
    }
    if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) ++o.video_packets;
    if (st->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) ++o.audio_packets;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  avformat_close_input(&ic);
  if (o.video_packets + o.audio_packets == 0 || end_us < start_us)
    return Status::Invalid(path + " holds no media");
  o.duration_ms = (end_us - start_us) / 1000;
  return o;
}

}  // namespace imago::live
