// Decoding user media with libavformat/libavcodec from memory (custom AVIOContext), converting
// video with libswscale and audio with libswresample.
#include <cstring>
#include <mutex>
#include <opencv2/imgproc.hpp>

#include "avatar/internal.h"
#include "avatar/offline.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

namespace imago::avatar::internal {
namespace {

struct MemReader {
  std::string_view data;
  int64_t pos = 0;
};

int mem_read(void* opaque, uint8_t* buf, int size) {
  auto* r = static_cast<MemReader*>(opaque);
  int64_t left = static_cast<int64_t>(r->data.size()) - r->pos;
  if (left <= 0) return AVERROR_EOF;
  int n = static_cast<int>(std::min<int64_t>(left, size));
  std::memcpy(buf, r->data.data() + r->pos, n);
  r->pos += n;
  return n;
}

int64_t mem_seek(void* opaque, int64_t offset, int whence) {
  auto* r = static_cast<MemReader*>(opaque);
  int64_t size = static_cast<int64_t>(r->data.size());
  if (whence == AVSEEK_SIZE) return size;
  int64_t np;
  switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET:
      np = offset;
      break;
    case SEEK_CUR:
      np = r->pos + offset;
      break;
    case SEEK_END:
      np = size + offset;
      break;
    default:
      return -1;
  }
  if (np < 0 || np > size) return -1;
  r->pos = np;
  return np;
}

// Owns the demuxer over an in-memory file.
class Input {
 public:
  ~Input() {
    if (fmt_) avformat_close_input(&fmt_);
    if (avio_) {
      av_freep(&avio_->buffer);
      avio_context_free(&avio_);
    }
  }
  Status open(std::string_view bytes, const char* what) {
    quiet_libav_logs();
    reader_.data = bytes;
    auto* buf = static_cast<uint8_t*>(av_malloc(65536));
    avio_ = avio_alloc_context(buf, 65536, 0, &reader_, mem_read, nullptr, mem_seek);
    fmt_ = avformat_alloc_context();
    if (!avio_ || !fmt_) return Status::Internal("out of memory");
    fmt_->pb = avio_;
    fmt_->flags |= AVFMT_FLAG_CUSTOM_IO;
    if (avformat_open_input(&fmt_, nullptr, nullptr, nullptr) < 0) {
      fmt_ = nullptr;  // freed by avformat_open_input on failure
      return Status::Invalid(std::string("The ") + what + " could not be decoded");
    }
    if (avformat_find_stream_info(fmt_, nullptr) < 0)
      return Status::Invalid(std::string("The ") + what + " could not be decoded");
    return Status::Ok();
  }
  AVFormatContext* fmt() { return fmt_; }

 private:
  MemReader reader_;
  AVIOContext* avio_ = nullptr;
  AVFormatContext* fmt_ = nullptr;
};

struct CodecCtx {
  AVCodecContext* c = nullptr;
  ~CodecCtx() { avcodec_free_context(&c); }
};
struct FramePtr {
  AVFrame* f = av_frame_alloc();
  ~FramePtr() { av_frame_free(&f); }
};
struct PacketPtr {
  AVPacket* p = av_packet_alloc();
  ~PacketPtr() { av_packet_free(&p); }
};

Status open_decoder(AVStream* st, CodecCtx& ctx) {
  const AVCodec* codec = avcodec_find_decoder(st->codecpar->codec_id);
  if (!codec) return Status::Invalid("Unsupported codec in the media file");
  ctx.c = avcodec_alloc_context3(codec);
  if (!ctx.c || avcodec_parameters_to_context(ctx.c, st->codecpar) < 0)
    return Status::Internal("decoder setup failed");
  ctx.c->thread_count = 1;
  if (avcodec_open2(ctx.c, codec, nullptr) < 0) return Status::Invalid("Unsupported codec in the media file");
  return Status::Ok();
}

// Audio: converts every decoded frame to mono s16 at out_rate.
class AudioSink {
 public:
  ~AudioSink() { swr_free(&swr_); }
  Status add(const AVFrame* f, int out_rate) {
    if (!swr_) {
      AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
      AVChannelLayout in_layout;
      if (f->ch_layout.nb_channels > 0)
        av_channel_layout_copy(&in_layout, &f->ch_layout);
      else
        av_channel_layout_default(&in_layout, 1);
      int rc = swr_alloc_set_opts2(&swr_, &mono, AV_SAMPLE_FMT_S16, out_rate, &in_layout,
                                   static_cast<AVSampleFormat>(f->format), f->sample_rate, 0, nullptr);
      av_channel_layout_uninit(&in_layout);
      if (rc < 0 || swr_init(swr_) < 0) return Status::Invalid("The audio track could not be converted");
    }
    int max_out = swr_get_out_samples(swr_, f->nb_samples);
    if (max_out <= 0) return Status::Ok();
    size_t base = pcm.samples.size();
    pcm.samples.resize(base + max_out);
    uint8_t* out[1] = {reinterpret_cast<uint8_t*>(pcm.samples.data() + base)};
    int n = swr_convert(swr_, out, max_out, const_cast<const uint8_t**>(f->extended_data), f->nb_samples);
    pcm.samples.resize(base + std::max(0, n));
    return Status::Ok();
  }
  void flush() {
    if (!swr_) return;
    int max_out = swr_get_out_samples(swr_, 0);
    if (max_out <= 0) return;
    size_t base = pcm.samples.size();
    pcm.samples.resize(base + max_out);
    uint8_t* out[1] = {reinterpret_cast<uint8_t*>(pcm.samples.data() + base)};
    int n = swr_convert(swr_, out, max_out, nullptr, 0);
    pcm.samples.resize(base + std::max(0, n));
  }
  Pcm pcm;

 private:
  SwrContext* swr_ = nullptr;
};

cv::Mat to_bgr(const AVFrame* f, SwsContext*& sws) {
  sws = sws_getCachedContext(sws, f->width, f->height, static_cast<AVPixelFormat>(f->format), f->width,
                             f->height, AV_PIX_FMT_BGR24, SWS_BILINEAR, nullptr, nullptr, nullptr);
  if (!sws) return {};
  cv::Mat m(f->height, f->width, CV_8UC3);
  uint8_t* dst[1] = {m.data};
  int stride[1] = {static_cast<int>(m.step)};
  sws_scale(sws, f->data, f->linesize, 0, f->height, dst, stride);
  return m;
}

constexpr int64_t kMaxDecodedAudioSamples = 22050LL * 600;  // 10 minutes is plenty for a sample

}  // namespace

void quiet_libav_logs() {
  // User media often carries harmless stream oddities, and x264 reports its settings at info
  // level; keep both out of the server's log unless someone raised the level on purpose.
  static std::once_flag quiet;
  std::call_once(quiet, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_ERROR);
  });
}

Result<DecodedVideo> decode_video(std::string_view bytes, int max_frames, int out_audio_rate) {
  Input in;
  if (auto s = in.open(bytes, "video"); !s.ok()) return s;
  AVFormatContext* fmt = in.fmt();
  int vi = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (vi < 0) return Status::Invalid("The video has no video track");
  int ai = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, vi, nullptr, 0);
  CodecCtx vctx, actx;
  if (auto s = open_decoder(fmt->streams[vi], vctx); !s.ok()) return s;
  bool have_audio = ai >= 0 && open_decoder(fmt->streams[ai], actx).ok();
  AVStream* vs = fmt->streams[vi];
  double duration = fmt->duration > 0 ? fmt->duration / static_cast<double>(AV_TIME_BASE) : 0;
  if (vs->duration > 0) duration = vs->duration * av_q2d(vs->time_base);
  // Sample frames evenly in time rather than decoding them all into memory.
  double step = duration > 0 ? duration / std::max(1, max_frames) : 0.2;
  double next_t = 0;
  DecodedVideo out;
  AudioSink sink;
  SwsContext* sws = nullptr;
  PacketPtr pkt;
  FramePtr frame;
  int64_t decoded_frames = 0;
  auto take_video = [&](AVFrame* f) {
    ++decoded_frames;
    int64_t pts = f->best_effort_timestamp;
    double t = pts == AV_NOPTS_VALUE ? decoded_frames / 25.0 : pts * av_q2d(vs->time_base);
    if (static_cast<int>(out.frames.size()) < max_frames && t + 1e-6 >= next_t) {
      cv::Mat m = to_bgr(f, sws);
      if (!m.empty()) {
        out.frames.push_back(std::move(m));
        out.times_s.push_back(t);
        next_t = t + step;
      }
    }
  };
  auto drain = [&](AVCodecContext* c, bool video) -> Status {
    while (avcodec_receive_frame(c, frame.f) == 0) {
      if (video)
        take_video(frame.f);
      else if (static_cast<int64_t>(sink.pcm.samples.size()) < kMaxDecodedAudioSamples) {
        if (auto s = sink.add(frame.f, out_audio_rate); !s.ok()) return s;
      }
      av_frame_unref(frame.f);
    }
    return Status::Ok();
  };
  while (av_read_frame(fmt, pkt.p) >= 0) {
    Status s;
    bool frames_done = static_cast<int>(out.frames.size()) >= max_frames;
    bool audio_done = !have_audio || static_cast<int64_t>(sink.pcm.samples.size()) >= kMaxDecodedAudioSamples;
    if (frames_done && audio_done) {
      av_packet_unref(pkt.p);
      break;
    }
    if (pkt.p->stream_index == vi) {
      // Once the sampled frames are taken, video packets are skipped (only audio is still needed).
      if (!frames_done && avcodec_send_packet(vctx.c, pkt.p) >= 0) s = drain(vctx.c, true);
    } else if (have_audio && pkt.p->stream_index == ai) {
      if (avcodec_send_packet(actx.c, pkt.p) >= 0) s = drain(actx.c, false);
    }
    av_packet_unref(pkt.p);
    if (!s.ok()) {
      sws_freeContext(sws);
      return s;
    }
  }
  avcodec_send_packet(vctx.c, nullptr);
  (void)drain(vctx.c, true);
  if (have_audio) {
    avcodec_send_packet(actx.c, nullptr);
    (void)drain(actx.c, false);
    sink.flush();
  }
  sws_freeContext(sws);
  if (out.frames.empty()) return Status::Invalid("The video contains no decodable frames");
  if (have_audio && !sink.pcm.samples.empty()) {
    sink.pcm.sample_rate = out_audio_rate;
    out.audio = std::move(sink.pcm);
  }
  return out;
}

Result<Pcm> decode_audio(std::string_view bytes, int out_rate) {
  Input in;
  if (auto s = in.open(bytes, "audio"); !s.ok()) return s;
  AVFormatContext* fmt = in.fmt();
  int ai = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  if (ai < 0) return Status::Invalid("The audio has no audio track");
  CodecCtx actx;
  if (auto s = open_decoder(fmt->streams[ai], actx); !s.ok()) return s;
  AudioSink sink;
  PacketPtr pkt;
  FramePtr frame;
  auto drain = [&]() -> Status {
    while (avcodec_receive_frame(actx.c, frame.f) == 0) {
      if (static_cast<int64_t>(sink.pcm.samples.size()) < kMaxDecodedAudioSamples)
        if (auto s = sink.add(frame.f, out_rate); !s.ok()) return s;
      av_frame_unref(frame.f);
    }
    return Status::Ok();
  };
  while (av_read_frame(fmt, pkt.p) >= 0) {
    Status s;
    if (pkt.p->stream_index == ai && avcodec_send_packet(actx.c, pkt.p) >= 0) s = drain();
    av_packet_unref(pkt.p);
    if (!s.ok()) return s;
  }
  avcodec_send_packet(actx.c, nullptr);
  if (auto s = drain(); !s.ok()) return s;
  sink.flush();
  if (sink.pcm.samples.empty()) return Status::Invalid("The audio contains no decodable samples");
  sink.pcm.sample_rate = out_rate;
  return std::move(sink.pcm);
}

Result<speech::Audio> decode_speech_audio(std::string_view bytes) {
  auto pcm = decode_audio(bytes, 24000);
  if (!pcm.ok()) return pcm.status();
  speech::Audio a;
  a.sample_rate = pcm->sample_rate;
  a.samples = std::move(pcm->samples);
  return a;
}

std::string encode_wav(const Pcm& pcm) {
  std::string out;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](uint16_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
  };
  uint32_t data_bytes = static_cast<uint32_t>(pcm.samples.size() * 2);
  out += "RIFF";
  u32(36 + data_bytes);
  out += "WAVEfmt ";
  u32(16);
  u16(1);
  u16(1);
  u32(static_cast<uint32_t>(pcm.sample_rate));
  u32(static_cast<uint32_t>(pcm.sample_rate * 2));
  u16(2);
  u16(16);
  out += "data";
  u32(data_bytes);
  for (int16_t s : pcm.samples) u16(static_cast<uint16_t>(s));
  return out;
}

}  // namespace imago::avatar::internal
