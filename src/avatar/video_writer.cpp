#include "avatar/video_writer.h"

#include <vector>

#include "avatar/internal.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

namespace imago::avatar::internal {

namespace {
std::string av_err(int rc) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(rc, buf, sizeof buf);
  return buf;
}
}  // namespace

struct Mp4Writer::Impl {
  AVFormatContext* oc = nullptr;
  AVCodecContext* vctx = nullptr;
  AVCodecContext* actx = nullptr;
  AVStream* vst = nullptr;
  AVStream* ast = nullptr;
  SwsContext* sws = nullptr;
  AVFrame* vframe = nullptr;
  AVFrame* aframe = nullptr;
  AVPacket* pkt = nullptr;
  std::vector<float> pending;  // audio waiting for a full AAC frame
  int64_t video_pts = 0, audio_pts = 0;
  bool header_written = false, finished = false;
  int width = 0, height = 0;

  ~Impl() {
    if (oc && header_written && !finished) av_write_trailer(oc);
    avcodec_free_context(&vctx);
    avcodec_free_context(&actx);
    sws_freeContext(sws);
    av_frame_free(&vframe);
    av_frame_free(&aframe);
    av_packet_free(&pkt);
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
  }

  Status drain(AVCodecContext* c, AVStream* st) {
    while (true) {
      int rc = avcodec_receive_packet(c, pkt);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return Status::Ok();
      if (rc < 0) return Status::Internal("encoder: " + av_err(rc));
      av_packet_rescale_ts(pkt, c->time_base, st->time_base);
      pkt->stream_index = st->index;
      rc = av_interleaved_write_frame(oc, pkt);
      if (rc < 0) return Status::Internal("writing MP4: " + av_err(rc));
    }
  }

  Status send_audio(int n) {
    if (av_frame_make_writable(aframe) < 0) return Status::Internal("audio frame");
    aframe->nb_samples = n;
    std::copy(pending.begin(), pending.begin() + n, reinterpret_cast<float*>(aframe->data[0]));
    pending.erase(pending.begin(), pending.begin() + n);
    aframe->pts = audio_pts;
    audio_pts += n;
    int rc = avcodec_send_frame(actx, aframe);
    if (rc < 0) return Status::Internal("AAC encoder: " + av_err(rc));
    return drain(actx, ast);
  }
};

Mp4Writer::Mp4Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Mp4Writer::~Mp4Writer() = default;

Result<std::unique_ptr<Mp4Writer>> Mp4Writer::open(const std::string& path, int width, int height,
                                                   int audio_rate) {
  if (width % 2 || height % 2) return Status::Invalid("video size must be even for H.264 4:2:0");
  quiet_libav_logs();
  auto I = std::make_unique<Impl>();
  I->width = width;
  I->height = height;
  int rc = avformat_alloc_output_context2(&I->oc, nullptr, "mp4", path.c_str());
  if (rc < 0 || !I->oc) return Status::Internal("MP4 muxer: " + av_err(rc));

  const AVCodec* vc = avcodec_find_encoder_by_name("libx264");
  if (!vc) return Status::Internal("libx264 encoder not available in libavcodec");
  I->vst = avformat_new_stream(I->oc, nullptr);
  I->vctx = avcodec_alloc_context3(vc);
  I->vctx->width = width;
  I->vctx->height = height;
  I->vctx->time_base = {1, kFps};
  I->vctx->framerate = {kFps, 1};
  I->vctx->pix_fmt = AV_PIX_FMT_YUV420P;
  I->vctx->gop_size = 2 * kFps;
  I->vctx->thread_count = 2;
  av_opt_set(I->vctx->priv_data, "preset", "veryfast", 0);
  av_opt_set(I->vctx->priv_data, "crf", "21", 0);
  if (I->oc->oformat->flags & AVFMT_GLOBALHEADER) I->vctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if ((rc = avcodec_open2(I->vctx, vc, nullptr)) < 0) return Status::Internal("libx264: " + av_err(rc));
  avcodec_parameters_from_context(I->vst->codecpar, I->vctx);
  I->vst->time_base = I->vctx->time_base;
  I->vst->avg_frame_rate = {kFps, 1};

  const AVCodec* ac = avcodec_find_encoder(AV_CODEC_ID_AAC);
  if (!ac) return Status::Internal("AAC encoder not available in libavcodec");
  I->ast = avformat_new_stream(I->oc, nullptr);
  I->actx = avcodec_alloc_context3(ac);
  I->actx->sample_fmt = AV_SAMPLE_FMT_FLTP;
  I->actx->sample_rate = audio_rate;
  AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
  av_channel_layout_copy(&I->actx->ch_layout, &mono);
  I->actx->bit_rate = 96000;
  I->actx->time_base = {1, audio_rate};
  if (I->oc->oformat->flags & AVFMT_GLOBALHEADER) I->actx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if ((rc = avcodec_open2(I->actx, ac, nullptr)) < 0) return Status::Internal("AAC: " + av_err(rc));
  avcodec_parameters_from_context(I->ast->codecpar, I->actx);
  I->ast->time_base = I->actx->time_base;

  I->vframe = av_frame_alloc();
  I->vframe->format = AV_PIX_FMT_YUV420P;
  I->vframe->width = width;
  I->vframe->height = height;
  I->aframe = av_frame_alloc();
  I->aframe->format = AV_SAMPLE_FMT_FLTP;
  I->aframe->sample_rate = audio_rate;
  av_channel_layout_copy(&I->aframe->ch_layout, &mono);
  I->aframe->nb_samples = I->actx->frame_size > 0 ? I->actx->frame_size : 1024;
  I->pkt = av_packet_alloc();
  if (av_frame_get_buffer(I->vframe, 0) < 0 || av_frame_get_buffer(I->aframe, 0) < 0)
    return Status::Internal("frame buffers");
  I->sws = sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_YUV420P, SWS_BILINEAR,
                          nullptr, nullptr, nullptr);
  if (!I->sws) return Status::Internal("swscale");
  if ((rc = avio_open(&I->oc->pb, path.c_str(), AVIO_FLAG_WRITE)) < 0)
    return Status::Internal("cannot write " + path + ": " + av_err(rc));
  AVDictionary* mux_opts = nullptr;
  av_dict_set(&mux_opts, "movflags", "+faststart", 0);
  rc = avformat_write_header(I->oc, &mux_opts);
  av_dict_free(&mux_opts);
  if (rc < 0) return Status::Internal("MP4 header: " + av_err(rc));
  I->header_written = true;
  return std::unique_ptr<Mp4Writer>(new Mp4Writer(std::move(I)));
}

Status Mp4Writer::write(const Frame& f) {
  Impl& I = *impl_;
  if (I.finished) return Status::Internal("MP4 writer already finished");
  if (!f.has_image || f.width != I.width || f.height != I.height ||
      f.rgb.size() != size_t(I.width) * I.height * 3)
    return Status::Invalid("frame does not match the video size");
  if (av_frame_make_writable(I.vframe) < 0) return Status::Internal("video frame");
  const uint8_t* src[1] = {f.rgb.data()};
  int stride[1] = {I.width * 3};
  sws_scale(I.sws, src, stride, 0, I.height, I.vframe->data, I.vframe->linesize);
  I.vframe->pts = I.video_pts++;
  int rc = avcodec_send_frame(I.vctx, I.vframe);
  if (rc < 0) return Status::Internal("libx264: " + av_err(rc));
  if (auto s = I.drain(I.vctx, I.vst); !s.ok()) return s;
  for (int16_t s : f.audio) I.pending.push_back(s / 32768.0f);
  int fsz = I.aframe->nb_samples;
  while (static_cast<int>(I.pending.size()) >= fsz)
    if (auto s = I.send_audio(fsz); !s.ok()) return s;
  return Status::Ok();
}

Status Mp4Writer::finish() {
  Impl& I = *impl_;
  if (I.finished) return Status::Ok();
  if (!I.pending.empty())
    if (auto s = I.send_audio(static_cast<int>(I.pending.size())); !s.ok()) return s;
  avcodec_send_frame(I.vctx, nullptr);
  if (auto s = I.drain(I.vctx, I.vst); !s.ok()) return s;
  avcodec_send_frame(I.actx, nullptr);
  if (auto s = I.drain(I.actx, I.ast); !s.ok()) return s;
  int rc = av_write_trailer(I.oc);
  I.finished = true;
  if (rc < 0) return Status::Internal("MP4 trailer: " + av_err(rc));
  return Status::Ok();
}

}  // namespace imago::avatar::internal
