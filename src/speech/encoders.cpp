#include "speech/encoders.h"

#include <FLAC/stream_encoder.h>
#include <lame/lame.h>
#include <opus/opusenc.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
}

#include <bit>
#include <cstring>
#include <vector>

namespace imago::speech {

std::optional<AudioFormat> parse_audio_format(std::string_view n) {
  if (n == "wav") return AudioFormat::kWav;
  if (n == "pcm") return AudioFormat::kPcm;
  if (n == "mp3") return AudioFormat::kMp3;
  if (n == "opus") return AudioFormat::kOpus;
  if (n == "aac") return AudioFormat::kAac;
  if (n == "flac") return AudioFormat::kFlac;
  return std::nullopt;
}

std::string_view audio_format_name(AudioFormat f) {
  switch (f) {
    case AudioFormat::kWav:
      return "wav";
    case AudioFormat::kPcm:
      return "pcm";
    case AudioFormat::kMp3:
      return "mp3";
    case AudioFormat::kOpus:
      return "opus";
    case AudioFormat::kAac:
      return "aac";
    case AudioFormat::kFlac:
      return "flac";
  }
  return "";
}

std::string_view audio_content_type(AudioFormat f) {
  switch (f) {
    case AudioFormat::kWav:
      return "audio/wav";
    case AudioFormat::kPcm:
      return "audio/pcm";
    case AudioFormat::kMp3:
      return "audio/mpeg";
    case AudioFormat::kOpus:
      return "audio/ogg";
    case AudioFormat::kAac:
      return "audio/aac";
    case AudioFormat::kFlac:
      return "audio/flac";
  }
  return "application/octet-stream";
}

namespace {

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xFF));
  s.push_back(static_cast<char>(v >> 8));
}

void append_pcm(std::string& out, const int16_t* s, size_t n) {
  size_t at = out.size();
  out.resize(at + n * 2);
  if constexpr (std::endian::native == std::endian::little) {
    if (n) std::memcpy(out.data() + at, s, n * 2);
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint16_t v = static_cast<uint16_t>(s[i]);
      out[at + 2 * i] = static_cast<char>(v & 0xFF);
      out[at + 2 * i + 1] = static_cast<char>(v >> 8);
    }
  }
}

class PcmEncoder : public Encoder {
 public:
  explicit PcmEncoder(std::string header) : header_(std::move(header)) {}
  Result<std::string> write(const int16_t* s, size_t n) override {
    std::string out = std::move(header_);
    header_.clear();
    out.reserve(out.size() + n * 2);
    append_pcm(out, s, n);
    return out;
  }
  Result<std::string> finish() override { return std::move(header_); }

 private:
  std::string header_;
};

class Mp3Encoder : public Encoder {
 public:
  ~Mp3Encoder() override {
    if (gf_) lame_close(gf_);
  }
  Status init(int rate, bool streaming) {
    streaming_ = streaming;
    gf_ = lame_init();
    if (!gf_) return Status::Internal("lame_init failed");
    lame_set_in_samplerate(gf_, rate);
    lame_set_out_samplerate(gf_, rate);
    lame_set_num_channels(gf_, 1);
    lame_set_mode(gf_, MONO);
    lame_set_brate(gf_, 64);  // CBR: every frame stands alone, so the stream can be cut anywhere
    // A whole file gets LAME's "Info" tag (first frame, patched at the end) recording encoder delay
    // and padding, so decoders trim them and the duration is exact; a stream cannot be patched.
    lame_set_bWriteVbrTag(gf_, streaming ? 0 : 1);
    lame_set_quality(gf_, 5);
    if (lame_init_params(gf_) < 0) return Status::Internal("lame_init_params failed");
    return Status::Ok();
  }
  Result<std::string> write(const int16_t* s, size_t n) override {
    std::string out;
    std::vector<unsigned char> buf;
    constexpr size_t kChunk = 8192;
    for (size_t off = 0; off < n; off += kChunk) {
      int m = static_cast<int>(std::min(kChunk, n - off));
      buf.resize(static_cast<size_t>(1.25 * m + 7200));
      short* pcm = const_cast<short*>(reinterpret_cast<const short*>(s + off));
      int r = lame_encode_buffer(gf_, pcm, pcm, m, buf.data(), static_cast<int>(buf.size()));
      if (r < 0) return Status::Internal("lame_encode_buffer failed: " + std::to_string(r));
      out.append(reinterpret_cast<char*>(buf.data()), r);
    }
    if (!streaming_) {
      whole_ += out;
      return std::string();
    }
    return out;
  }
  Result<std::string> finish() override {
    std::vector<unsigned char> buf(7200);
    int r = lame_encode_flush(gf_, buf.data(), static_cast<int>(buf.size()));
    if (r < 0) return Status::Internal("lame_encode_flush failed");
    std::string tail(reinterpret_cast<char*>(buf.data()), r);
    if (streaming_) return tail;
    whole_ += tail;
    size_t n = lame_get_lametag_frame(gf_, buf.data(), buf.size());
    if (n > 0 && n <= buf.size() && n <= whole_.size())
      whole_.replace(0, n, reinterpret_cast<char*>(buf.data()), n);
    return std::move(whole_);
  }

 private:
  lame_global_flags* gf_ = nullptr;
  bool streaming_ = false;
  std::string whole_;
};

class OpusEncoder : public Encoder {
 public:
  ~OpusEncoder() override {
    if (enc_) ope_encoder_destroy(enc_);
    if (comments_) ope_comments_destroy(comments_);
  }
  Status init(int rate) {
    comments_ = ope_comments_create();
    OpusEncCallbacks cb{&OpusEncoder::on_write, &OpusEncoder::on_close};
    int err = 0;
    enc_ = ope_encoder_create_callbacks(&cb, this, comments_, rate, 1, 0, &err);
    if (!enc_ || err != OPE_OK)
      return Status::Internal("ope_encoder_create_callbacks failed: " + std::to_string(err));
    // Pages leave every 20 ms of audio instead of up to 1 s, for streaming.
    ope_encoder_ctl(enc_, OPE_SET_MUXING_DELAY(960));
    return Status::Ok();
  }
  Result<std::string> write(const int16_t* s, size_t n) override {
    if (ope_encoder_write(enc_, s, static_cast<int>(n)) != OPE_OK)
      return Status::Internal("ope_encoder_write failed");
    return take();
  }
  Result<std::string> finish() override {
    if (ope_encoder_drain(enc_) != OPE_OK) return Status::Internal("ope_encoder_drain failed");
    return take();
  }

 private:
  static int on_write(void* self, const unsigned char* p, opus_int32 len) {
    static_cast<OpusEncoder*>(self)->out_.append(reinterpret_cast<const char*>(p), len);
    return 0;
  }
  static int on_close(void*) { return 0; }
  std::string take() {
    std::string o = std::move(out_);
    out_.clear();
    return o;
  }
  OggOpusComments* comments_ = nullptr;
  OggOpusEnc* enc_ = nullptr;
  std::string out_;
};

class FlacEncoder : public Encoder {
 public:
  ~FlacEncoder() override {
    if (enc_) FLAC__stream_encoder_delete(enc_);
  }
  Status init(int rate, bool streaming, size_t total) {
    streaming_ = streaming;
    enc_ = FLAC__stream_encoder_new();
    if (!enc_) return Status::Internal("FLAC__stream_encoder_new failed");
    FLAC__stream_encoder_set_channels(enc_, 1);
    FLAC__stream_encoder_set_bits_per_sample(enc_, 16);
    FLAC__stream_encoder_set_sample_rate(enc_, rate);
    FLAC__stream_encoder_set_compression_level(enc_, 5);
    if (!streaming) FLAC__stream_encoder_set_total_samples_estimate(enc_, total);
    // Without streaming the buffer is seekable, so libFLAC rewrites STREAMINFO (exact length, MD5).
    auto st = FLAC__stream_encoder_init_stream(enc_, &FlacEncoder::on_write,
                                               streaming ? nullptr : &FlacEncoder::on_seek,
                                               streaming ? nullptr : &FlacEncoder::on_tell, nullptr, this);
    if (st != FLAC__STREAM_ENCODER_INIT_STATUS_OK) return Status::Internal("FLAC encoder init failed");
    return Status::Ok();
  }
  Result<std::string> write(const int16_t* s, size_t n) override {
    std::vector<FLAC__int32> buf(n);
    for (size_t i = 0; i < n; ++i) buf[i] = s[i];
    if (n && !FLAC__stream_encoder_process_interleaved(enc_, buf.data(), static_cast<unsigned>(n))) {
      return Status::Internal("FLAC encoding failed");
    }
    return take(false);
  }
  Result<std::string> finish() override {
    if (!FLAC__stream_encoder_finish(enc_)) return Status::Internal("FLAC finish failed");
    return take(true);
  }

 private:
  static FLAC__StreamEncoderWriteStatus on_write(const FLAC__StreamEncoder*, const FLAC__byte buf[], size_t n,
                                                 unsigned, unsigned, void* self) {
    auto* e = static_cast<FlacEncoder*>(self);
    if (e->pos_ < e->data_.size()) {  // rewriting a header after a seek
      size_t over = std::min(n, e->data_.size() - e->pos_);
      std::memcpy(e->data_.data() + e->pos_, buf, over);
      e->data_.append(reinterpret_cast<const char*>(buf) + over, n - over);
    } else {
      e->data_.append(reinterpret_cast<const char*>(buf), n);
    }
    e->pos_ += n;
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
  }
  static FLAC__StreamEncoderSeekStatus on_seek(const FLAC__StreamEncoder*, FLAC__uint64 off, void* self) {
    auto* e = static_cast<FlacEncoder*>(self);
    if (off > e->data_.size()) return FLAC__STREAM_ENCODER_SEEK_STATUS_ERROR;
    e->pos_ = off;
    return FLAC__STREAM_ENCODER_SEEK_STATUS_OK;
  }
  static FLAC__StreamEncoderTellStatus on_tell(const FLAC__StreamEncoder*, FLAC__uint64* off, void* self) {
    *off = static_cast<FlacEncoder*>(self)->pos_;
    return FLAC__STREAM_ENCODER_TELL_STATUS_OK;
  }
  // Streaming hands out bytes as they come; otherwise everything waits for finish() (the header
  // is patched at the end).
  std::string take(bool final) {
    if (!streaming_ && !final) return {};
    std::string o = std::move(data_);
    data_.clear();
    pos_ = 0;
    return o;
  }
  FLAC__StreamEncoder* enc_ = nullptr;
  bool streaming_ = false;
  std::string data_;
  size_t pos_ = 0;
};

class AacEncoder : public Encoder {
 public:
  ~AacEncoder() override {
    if (fmt_) {
      if (fmt_->pb) {
        av_freep(&fmt_->pb->buffer);
        avio_context_free(&fmt_->pb);
      }
      avformat_free_context(fmt_);
    }
    avcodec_free_context(&ctx_);
    av_frame_free(&frame_);
    av_packet_free(&pkt_);
  }
  Status init(int rate) {
    const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
    if (!codec) return Status::Internal("libavcodec has no AAC encoder");
    ctx_ = avcodec_alloc_context3(codec);
    ctx_->sample_fmt = AV_SAMPLE_FMT_FLTP;
    ctx_->sample_rate = rate;
    av_channel_layout_default(&ctx_->ch_layout, 1);
    ctx_->bit_rate = 64000;
    ctx_->time_base = AVRational{1, rate};
    if (avcodec_open2(ctx_, codec, nullptr) < 0) return Status::Internal("cannot open the AAC encoder");
    // The ADTS muxer writes the 7-byte header in front of every AAC frame (self-delimiting stream).
    if (avformat_alloc_output_context2(&fmt_, nullptr, "adts", nullptr) < 0 || !fmt_) {
      return Status::Internal("no ADTS muxer");
    }
    AVStream* st = avformat_new_stream(fmt_, nullptr);
    avcodec_parameters_from_context(st->codecpar, ctx_);
    st->time_base = ctx_->time_base;
    unsigned char* iobuf = static_cast<unsigned char*>(av_malloc(4096));
    fmt_->pb = avio_alloc_context(iobuf, 4096, 1, this, nullptr, &AacEncoder::on_write, nullptr);
    if (avformat_write_header(fmt_, nullptr) < 0) return Status::Internal("ADTS header failed");
    frame_ = av_frame_alloc();
    frame_->nb_samples = ctx_->frame_size;
    frame_->format = ctx_->sample_fmt;
    av_channel_layout_copy(&frame_->ch_layout, &ctx_->ch_layout);
    if (av_frame_get_buffer(frame_, 0) < 0) return Status::Internal("AAC frame allocation failed");
    pkt_ = av_packet_alloc();
    return Status::Ok();
  }
  Result<std::string> write(const int16_t* s, size_t n) override {
    pending_.insert(pending_.end(), s, s + n);
    size_t fs = static_cast<size_t>(ctx_->frame_size), off = 0;
    while (pending_.size() - off >= fs) {
      Status st = encode_frame(pending_.data() + off, fs);
      if (!st.ok()) return st;
      off += fs;
    }
    pending_.erase(pending_.begin(), pending_.begin() + off);
    return take();
  }
  Result<std::string> finish() override {
    if (!pending_.empty()) {
      Status st = encode_frame(pending_.data(), pending_.size());
      if (!st.ok()) return st;
      pending_.clear();
    }
    Status st = send(nullptr);
    if (!st.ok()) return st;
    av_write_trailer(fmt_);
    avio_flush(fmt_->pb);
    return take();
  }

 private:
  Status encode_frame(const int16_t* s, size_t n) {
    if (av_frame_make_writable(frame_) < 0) return Status::Internal("AAC frame not writable");
    frame_->nb_samples = static_cast<int>(n);
    float* dst = reinterpret_cast<float*>(frame_->data[0]);
    for (size_t i = 0; i < n; ++i) dst[i] = s[i] / 32768.0f;
    frame_->pts = pts_;
    pts_ += static_cast<int64_t>(n);
    return send(frame_);
  }
  Status send(AVFrame* f) {
    if (avcodec_send_frame(ctx_, f) < 0) return Status::Internal("AAC encoding failed");
    for (;;) {
      int r = avcodec_receive_packet(ctx_, pkt_);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) break;
      if (r < 0) return Status::Internal("AAC encoding failed");
      pkt_->stream_index = 0;
      av_packet_rescale_ts(pkt_, ctx_->time_base, fmt_->streams[0]->time_base);
      if (av_write_frame(fmt_, pkt_) < 0) return Status::Internal("ADTS write failed");
      av_packet_unref(pkt_);
    }
    avio_flush(fmt_->pb);
    return Status::Ok();
  }
  static int on_write(void* self, uint8_t* buf, int n) {
    static_cast<AacEncoder*>(self)->out_.append(reinterpret_cast<char*>(buf), n);
    return n;
  }
  std::string take() {
    std::string o = std::move(out_);
    out_.clear();
    return o;
  }
  AVCodecContext* ctx_ = nullptr;
  AVFormatContext* fmt_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* pkt_ = nullptr;
  std::vector<int16_t> pending_;
  int64_t pts_ = 0;
  std::string out_;
};

}  // namespace

std::string wav_header(int rate, uint32_t data_bytes) {
  std::string h;
  h.reserve(44);
  h += "RIFF";
  put_u32(h, data_bytes == 0xFFFFFFFFu ? 0xFFFFFFFFu : 36 + data_bytes);
  h += "WAVEfmt ";
  put_u32(h, 16);
  put_u16(h, 1);  // PCM
  put_u16(h, 1);  // mono
  put_u32(h, static_cast<uint32_t>(rate));
  put_u32(h, static_cast<uint32_t>(rate * 2));
  put_u16(h, 2);
  put_u16(h, 16);
  h += "data";
  put_u32(h, data_bytes);
  return h;
}

Result<std::unique_ptr<Encoder>> make_encoder(AudioFormat f, int rate, bool streaming, size_t total) {
  switch (f) {
    case AudioFormat::kWav:
      return std::unique_ptr<Encoder>(
          new PcmEncoder(wav_header(rate, streaming ? 0xFFFFFFFFu : static_cast<uint32_t>(total * 2))));
    case AudioFormat::kPcm:
      return std::unique_ptr<Encoder>(new PcmEncoder(""));
    case AudioFormat::kMp3: {
      auto e = std::make_unique<Mp3Encoder>();
      Status s = e->init(rate, streaming);
      if (!s.ok()) return s;
      return std::unique_ptr<Encoder>(std::move(e));
    }
    case AudioFormat::kOpus: {
      auto e = std::make_unique<OpusEncoder>();
      Status s = e->init(rate);
      if (!s.ok()) return s;
      return std::unique_ptr<Encoder>(std::move(e));
    }
    case AudioFormat::kFlac: {
      auto e = std::make_unique<FlacEncoder>();
      Status s = e->init(rate, streaming, total);
      if (!s.ok()) return s;
      return std::unique_ptr<Encoder>(std::move(e));
    }
    case AudioFormat::kAac: {
      auto e = std::make_unique<AacEncoder>();
      Status s = e->init(rate);
      if (!s.ok()) return s;
      return std::unique_ptr<Encoder>(std::move(e));
    }
  }
  return Status::Internal("unknown format");
}

Result<std::string> encode_audio(AudioFormat f, int rate, const int16_t* s, size_t n) {
  auto enc = make_encoder(f, rate, false, n);
  if (!enc.ok()) return enc.status();
  auto a = (*enc)->write(s, n);
  if (!a.ok()) return a.status();
  auto b = (*enc)->finish();
  if (!b.ok()) return b.status();
  if (b->empty()) return std::move(a.value());
  if (a->empty()) return std::move(b.value());
  a->append(*b);
  return std::move(a.value());
}

}  // namespace imago::speech
