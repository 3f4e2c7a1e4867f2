// Decodes a session's H.264 + Opus (docs/live-protocol.md, "Encoded media") with WebCodecs for the
// viewer page (viewer.js): the configuration messages (avcC, OpusHead) configure a VideoDecoder and
// an AudioDecoder, then every access unit and Opus packet is decoded with its pts (microseconds on
// the session's audio clock). Pictures come out as VideoFrames, audio as mono Float32Arrays at
// 48 kHz. After a decoder error, pictures are skipped up to the next key frame, which is asked for.
(() => {
  'use strict';
  const FLAG_KEY = 8, FLAG_CONFIG = 16;
  const CODEC_H264 = 3, CODEC_OPUS = 2;

  // True where both decoders exist and take this stream (constrained baseline; the level is checked
  // again with the real avcC when it arrives).
  async function supported() {
    if (typeof VideoDecoder === 'undefined' || typeof AudioDecoder === 'undefined' ||
        typeof EncodedVideoChunk === 'undefined' || typeof EncodedAudioChunk === 'undefined') return false;
    try {
      const v = await VideoDecoder.isConfigSupported({ codec: 'avc1.42C01F', optimizeForLatency: true });
      const a = await AudioDecoder.isConfigSupported({ codec: 'opus', sampleRate: 48000, numberOfChannels: 1 });
      return !!(v.supported && a.supported);
    } catch (err) {
      return false;
    }
  }

  const hex = (b) => b.toString(16).toUpperCase().padStart(2, '0');

  // handlers: picture(VideoFrame), audio(pts, Float32Array), keyFrameNeeded(), error(string).
  function create(handlers) {
    const stats = { videoChunks: 0, audioChunks: 0, pictures: 0, audioDecoded: 0, keyFrames: 0, errors: 0,
                    skipped: 0, codec: null };
    let video = null, audio = null, videoConfig = null, audioConfig = null, needKey = true;

    function makeVideo() {
      video = new VideoDecoder({
        output: (frame) => { stats.pictures++; handlers.picture(frame); },
        error: (e) => {
          stats.errors++;
          handlers.error('video decoder: ' + e);
          video = null;  // a closed decoder: a new one on the next key frame
          needKey = true;
          handlers.keyFrameNeeded();
        },
      });
      video.configure(videoConfig);
    }
    function makeAudio() {
      audio = new AudioDecoder({
        output: (data) => {
          const n = data.numberOfFrames;
          const samples = new Float32Array(n);
          data.copyTo(samples, { planeIndex: 0, format: 'f32-planar' });
          handlers.audio(data.timestamp, samples);
          stats.audioDecoded += n;
          data.close();
        },
        error: (e) => { stats.errors++; handlers.error('audio decoder: ' + e); audio = null; },
      });
      audio.configure(audioConfig);
    }

    // One binary message: header fields h (viewer.js parses them) and its payload (an ArrayBuffer view).
    function message(h, payload) {
      if (h.flags & FLAG_CONFIG) {
        if (h.kind === 1 && h.codec === CODEC_H264) {
          const b = new Uint8Array(payload);
          stats.codec = 'avc1.' + hex(b[1]) + hex(b[2]) + hex(b[3]);
          videoConfig = { codec: stats.codec, description: b.slice(), optimizeForLatency: true,
                          codedWidth: h.a, codedHeight: h.b };
          if (video) video.close();
          video = null;
          needKey = true;
        } else if (h.kind === 2 && h.codec === CODEC_OPUS) {
          audioConfig = { codec: 'opus', sampleRate: 48000, numberOfChannels: 1,
                          description: new Uint8Array(payload).slice() };
          if (audio) audio.close();
          makeAudio();
        }
        return;
      }
      if (h.kind === 1 && h.codec === CODEC_H264) {
        stats.videoChunks++;
        if (!videoConfig) return;
        const key = (h.flags & FLAG_KEY) !== 0;
        if (needKey && !key) { stats.skipped++; return; }
        if (!video) makeVideo();
        needKey = false;
        if (key) stats.keyFrames++;
        video.decode(new EncodedVideoChunk({ type: key ? 'key' : 'delta', timestamp: h.pts, data: payload }));
      } else if (h.kind === 2 && h.codec === CODEC_OPUS) {
        stats.audioChunks++;
        if (!audio) { if (audioConfig) makeAudio(); else return; }
        // h.a: the packet's samples at 48 kHz (1920: one picture's 40 ms).
        audio.decode(new EncodedAudioChunk({ type: 'key', timestamp: h.pts, duration: Math.round(h.a * 1e6 / 48000), data: payload }));
      }
    }

    // A new connection: the server configures again and starts with a key frame.
    function reset() {
      for (const d of [video, audio]) { try { if (d) d.close(); } catch (err) { /* already closed */ } }
      video = audio = videoConfig = audioConfig = null;
      needKey = true;
    }

    return { message, reset, stats };
  }

  window.ImagoMediaDecoder = { supported, create };
})();
