#include "live/h264_encoder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <opencv2/imgproc.hpp>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include "live/media_framing.h"

namespace imago::live {

namespace {

// The NAL units of an Annex B stream, without their start codes.
std::vector<std::pair<const uint8_t*, size_t>> nal_units(const uint8_t* d, size_t n) {
  std::vector<std::pair<const uint8_t*, size_t>> out;
  size_t i = 0, start = SIZE_MAX;
  while (i + 3 <= n) {
    if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) {
      if (start != SIZE_MAX) {
        size_t end = i;
        while (end > start && d[end - 1] == 0) --end;  // the zero of a 4-byte start code
        out.emplace_back(d + start, end - start);
      }
      i += 3;
      start = i;
    } else {
      ++i;
    }
  }
  if (start != SIZE_MAX && start < n) out.emplace_back(d + start, n - start);
  return out;
}

void put_be(std::string& s, uint32_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string av_error(int rc) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(rc, buf, sizeof buf);
  return buf;
}

}  // namespace

std::string annexb_to_avcc(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve(size + 16);
  for (auto [p, n] : nal_units(data, size)) {
    const int type = n > 0 ? (p[0] & 0x1f) : 0;
    if (n == 0 || type == 7 || type == 8 || type == 9) continue;
    put_be(out, static_cast<uint32_t>(n), 4);
    out.append(reinterpret_cast<const char*>(p), n);
  }
  return out;
}

std::string avcc_from_annexb(const uint8_t* data, size_t size) {
  std::string sps, pps;
  for (auto [p, n] : nal_units(data, size)) {
    if (n == 0) continue;
    const int type = p[0] & 0x1f;
    if (type == 7 && sps.empty()) sps.assign(reinterpret_cast<const char*>(p), n);
    if (type == 8 && pps.empty()) pps.assign(reinterpret_cast<const char*>(p), n);
  }
  if (sps.size() < 4 || pps.empty()) return {};
  std::string r;
  r.push_back(1);                        // configurationVersion
  r.push_back(sps[1]);                   // AVCProfileIndication
  r.push_back(sps[2]);                   // profile_compatibility (constraint flags)
  r.push_back(sps[3]);                   // AVCLevelIndication
  r.push_back(static_cast<char>(0xff));  // lengthSizeMinusOne = 3
  r.push_back(static_cast<char>(0xe1));  // one SPS
  put_be(r, static_cast<uint32_t>(sps.size()), 2);
  r += sps;
  r.push_back(1);  // one PPS
  put_be(r, static_cast<uint32_t>(pps.size()), 2);
  r += pps;
  return r;
}

struct H264Encoder::Impl {
  H264Settings s;
  int out_w = 0, out_h = 0;
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* pkt = nullptr;
  SwsContext* sws = nullptr;  // when scaling down
  bool direct = false;        // same size: OpenCV converts (into the frame, else into `i420`)
  cv::Mat i420;
  std::string avcc;

  ~Impl() {
    sws_freeContext(sws);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&ctx);
  }
};

H264Encoder::H264Encoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
H264Encoder::~H264Encoder() = default;

Result<std::unique_ptr<H264Encoder>> H264Encoder::create(const H264Settings& s) {
  if (s.width <= 0 || s.height <= 0 || s.max_side < 16) return Status::Invalid("bad H.264 picture size");
  auto impl = std::make_unique<Impl>();
  impl->s = s;
  // Scale to the cap keeping the aspect ratio; 4:2:0 needs even sides.
  const double k = std::min(1.0, double(s.max_side) / std::max(s.width, s.height));
  impl->out_w = std::max(2, int(s.width * k) & ~1);
  impl->out_h = std::max(2, int(s.height * k) & ~1);

  // libx264 reports its settings and statistics at info level on every open and close: noise in
  // a server's log, where errors still go.
  if (av_log_get_level() > AV_LOG_WARNING) av_log_set_level(AV_LOG_WARNING);
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) return Status::Internal("libavcodec has no libx264 encoder");
  AVCodecContext* c = impl->ctx = avcodec_alloc_context3(codec);
  if (!c) return Status::Internal("avcodec_alloc_context3 failed");
  c->width = impl->out_w;
  c->height = impl->out_h;
  c->pix_fmt = AV_PIX_FMT_YUV420P;
  c->time_base = AVRational{1, s.fps};
  c->framerate = AVRational{s.fps, 1};
  c->gop_size = s.keyframe_interval_frames;
  c->keyint_min = s.keyframe_interval_frames;
  c->max_b_frames = 0;
  c->thread_count = 1;                      // a room is one of many sessions on a core: no encoder threads
  c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;  // SPS/PPS in extradata (the avcC), not in-band
  c->rc_max_rate = s.bitrate;
  c->rc_buffer_size = static_cast<int>(s.bitrate);  // one second of VBV buffer
  // BT.601 limited range: what both conversions below make (OpenCV and swscale), said in the VUI so
  // decoders convert back with the same matrix.
  c->colorspace = AVCOL_SPC_SMPTE170M;
  c->color_primaries = AVCOL_PRI_SMPTE170M;
  c->color_trc = AVCOL_TRC_SMPTE170M;
  c->color_range = AVCOL_RANGE_MPEG;
  av_opt_set(c->priv_data, "preset", "ultrafast", 0);
  av_opt_set(c->priv_data, "tune", "zerolatency", 0);
  av_opt_set(c->priv_data, "profile", "baseline", 0);
  av_opt_set(c->priv_data, "crf", "26", 0);
  av_opt_set(c->priv_data, "forced-idr", "1", 0);
  av_opt_set(c->priv_data, "x264-params", "scenecut=0:aud=0", 0);
  if (int rc = avcodec_open2(c, codec, nullptr); rc < 0)
    return Status::Internal("opening libx264 failed: " + av_error(rc));
  impl->avcc = avcc_from_annexb(c->extradata, static_cast<size_t>(c->extradata_size));
  if (impl->avcc.empty()) return Status::Internal("libx264 gave no SPS/PPS");

  impl->frame = av_frame_alloc();
  impl->pkt = av_packet_alloc();
  if (!impl->frame || !impl->pkt) return Status::Internal("out of memory");
  impl->frame->format = AV_PIX_FMT_YUV420P;
  impl->frame->width = impl->out_w;
  impl->frame->height = impl->out_h;
  // A picture at its own size (a room's usual case) is converted by OpenCV, whose RGB -> I420 is
  // vectorised and about 4x cheaper than swscale's (media_encoder_benchmark); both use BT.601
  // limited range. Scaling down stays with swscale.
  impl->direct = impl->out_w == s.width && impl->out_h == s.height;
  if (impl->direct) {
    // The planes back to back without row padding, which is I420 as OpenCV writes it, so the
    // conversion writes the frame itself (av_frame_get_buffer pads rows and planes; libx264
    // copies the picture in and needs neither).
    const int bytes = av_image_get_buffer_size(AV_PIX_FMT_YUV420P, impl->out_w, impl->out_h, 1);
    impl->frame->buf[0] = bytes > 0 ? av_buffer_alloc(static_cast<size_t>(bytes)) : nullptr;
    if (!impl->frame->buf[0] ||
        av_image_fill_arrays(impl->frame->data, impl->frame->linesize, impl->frame->buf[0]->data,
                             AV_PIX_FMT_YUV420P, impl->out_w, impl->out_h, 1) < 0)
      return Status::Internal("allocating the I420 frame failed");
  } else {
    if (av_frame_get_buffer(impl->frame, 0) < 0) return Status::Internal("av_frame_get_buffer failed");
    impl->sws = sws_getContext(s.width, s.height, AV_PIX_FMT_RGB24, impl->out_w, impl->out_h,
                               AV_PIX_FMT_YUV420P, SWS_AREA, nullptr, nullptr, nullptr);
    if (!impl->sws) return Status::Internal("sws_getContext failed");
  }
  return std::unique_ptr<H264Encoder>(new H264Encoder(std::move(impl)));
}

int H264Encoder::width() const {
  return impl_->out_w;
}
int H264Encoder::height() const {
  return impl_->out_h;
}
const std::string& H264Encoder::avcc() const {
  return impl_->avcc;
}

std::string H264Encoder::codec_string() const {
  char buf[16];
  const auto b = [&](int i) { return static_cast<unsigned>(static_cast<uint8_t>(impl_->avcc[i])); };
  std::snprintf(buf, sizeof buf, "avc1.%02X%02X%02X", b(1), b(2), b(3));
  return buf;
}

Result<EncodedPacket> H264Encoder::encode(const uint8_t* rgb, int64_t frame_index, bool key_frame) {
  Impl& m = *impl_;
  if (av_frame_make_writable(m.frame) < 0) return Status::Internal("av_frame_make_writable failed");
  if (m.direct) {
    const cv::Mat in(m.s.height, m.s.width, CV_8UC3, const_cast<uint8_t*>(rgb));
    // The frame laid out as I420 (create()): converted in place. av_frame_make_writable gives a
    // padded buffer when libavcodec still holds the last picture; then through `i420` and a copy.
    const size_t y_bytes = size_t(m.out_w) * m.out_h, c_bytes = y_bytes / 4;
    if (m.frame->linesize[0] == m.out_w && m.frame->linesize[1] == m.out_w / 2 &&
        m.frame->linesize[2] == m.out_w / 2 && m.frame->data[1] == m.frame->data[0] + y_bytes &&
        m.frame->data[2] == m.frame->data[1] + c_bytes) {
      cv::Mat yuv(m.out_h * 3 / 2, m.out_w, CV_8UC1, m.frame->data[0]);
      cv::cvtColor(in, yuv, cv::COLOR_RGB2YUV_I420);
      if (yuv.data != m.frame->data[0]) return Status::Internal("RGB -> I420 did not write the frame");
    } else {
      cv::cvtColor(in, m.i420, cv::COLOR_RGB2YUV_I420);
      // I420 planes, one after the other, into the frame's (possibly padded) planes.
      const uint8_t* plane = m.i420.data;
      for (int p = 0; p < 3; ++p) {
        const int w = p ? m.out_w / 2 : m.out_w, h = p ? m.out_h / 2 : m.out_h;
        for (int y = 0; y < h; ++y, plane += w)
          std::memcpy(m.frame->data[p] + size_t(y) * m.frame->linesize[p], plane, size_t(w));
      }
    }
  } else {
    const uint8_t* src[1] = {rgb};
    const int src_stride[1] = {m.s.width * 3};
    sws_scale(m.sws, src, src_stride, 0, m.s.height, m.frame->data, m.frame->linesize);
  }
  m.frame->pts = frame_index;
  m.frame->pict_type = key_frame ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
  if (int rc = avcodec_send_frame(m.ctx, m.frame); rc < 0)
    return Status::Internal("H.264 encoding failed: " + av_error(rc));
  // zerolatency without B-frames or threads: the access unit of this picture comes out at once.
  int rc = avcodec_receive_packet(m.ctx, m.pkt);
  if (rc < 0) return Status::Internal("H.264 encoder held a picture back: " + av_error(rc));
  EncodedPacket p;
  p.kind = MediaKind::kVideo;
  p.codec = kCodecH264;
  p.flags = (m.pkt->flags & AV_PKT_FLAG_KEY) ? kFlagKeyFrame : 0;
  p.frame_index = static_cast<uint32_t>(frame_index);
  p.pts_us = frame_index * 1'000'000 / m.s.fps;
  p.duration_us = 1'000'000 / m.s.fps;
  p.data = annexb_to_avcc(m.pkt->data, static_cast<size_t>(m.pkt->size));
  av_packet_unref(m.pkt);
  return p;
}

}  // namespace imago::live
