// AudioWorklet: the viewer's microphone as 16-bit mono PCM at 16 kHz in 20 ms chunks (640 bytes),
// the binary framing of docs/live-protocol.md. The page asks for a 16 kHz context (the browser
// resamples); where the context runs at the device rate instead, samples are resampled here by
// linear interpolation (speech sits well below 8 kHz, so aliasing is slight).
class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / 16000;  // input samples per output sample
    this.pos = 0;                    // position of the next output sample in the input stream
    this.prev = 0;                   // last input sample of the previous block
    this.out = new Int16Array(320);
    this.n = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    // Input index -1 is the previous block's last sample.
    while (this.pos < input.length) {
      const i = Math.floor(this.pos), f = this.pos - i;
      const a = i === 0 ? this.prev : input[i - 1], b = input[i];
      const s = Math.max(-1, Math.min(1, a + (b - a) * f));
      this.out[this.n++] = s < 0 ? s * 32768 : s * 32767;
      if (this.n === this.out.length) {
        this.port.postMessage(this.out.buffer.slice(0));
        this.n = 0;
      }
      this.pos += this.step;
    }
    this.pos -= input.length;
    this.prev = input[input.length - 1];
    return true;
  }
}
registerProcessor('mic-capture', MicCapture);
