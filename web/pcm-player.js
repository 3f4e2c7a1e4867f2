// AudioWorklet: plays the session's audio chunks in order and reports which chunk is playing, so
// the page can show the video frame with the same timestamp (audio is the master clock). Chunks
// are 16-bit PCM (jpeg+pcm sessions) or float samples decoded from Opus (h264+opus), at the
// context's rate; a flush (interrupt) drops everything not yet played.
class PcmPlayer extends AudioWorkletProcessor {
  constructor() {
    super();
    this.chunks = [];   // {pts, samples: Float32Array}
    this.offset = 0;    // samples of chunks[0] already played
    this.played = 0;    // samples played in total
    this.lastReport = 0;
    this.port.onmessage = (e) => {
      const m = e.data;
      if (m.flush) { this.chunks = []; this.offset = 0; return; }
      let samples;
      if (m.f32) {
        samples = new Float32Array(m.samples);
      } else {
        const s16 = new Int16Array(m.samples);
        samples = new Float32Array(s16.length);
        for (let k = 0; k < s16.length; k++) samples[k] = s16[k] / 32768;
      }
      this.chunks.push({ pts: m.pts, samples });
      // A live stream: keep at most ~350 ms queued (the server runs ~120 ms ahead). More builds up
      // when the page was busy or the context started late, and would hold the audio, and the
      // pictures drawn on its clock, behind for the rest of the session: drop the oldest.
      let queued = -this.offset;
      for (const c of this.chunks) queued += c.samples.length;
      while (this.chunks.length > 1 && queued > 0.35 * sampleRate) {
        queued -= this.chunks[0].samples.length - this.offset;
        this.chunks.shift();
        this.offset = 0;
        this.dropped = (this.dropped || 0) + 1;
      }
    };
  }
  process(inputs, outputs) {
    const out = outputs[0][0];
    let i = 0;
    while (i < out.length && this.chunks.length) {
      const c = this.chunks[0];
      const n = Math.min(out.length - i, c.samples.length - this.offset);
      out.set(c.samples.subarray(this.offset, this.offset + n), i);
      i += n; this.offset += n; this.played += n;
      if (this.offset >= c.samples.length) { this.chunks.shift(); this.offset = 0; }
    }
    for (; i < out.length; i++) out[i] = 0;  // underrun: silence, the clock waits
    if (currentTime - this.lastReport > 0.02) {
      this.lastReport = currentTime;
      const c = this.chunks[0];
      this.port.postMessage({ pts: c ? c.pts + (this.offset / sampleRate) * 1e6 : null,
                              queued: this.chunks.length, played: this.played });
    }
    return true;
  }
}
registerProcessor('pcm-player', PcmPlayer);
