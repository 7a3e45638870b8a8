// AudioWorklet processor (loaded by URL: record/microphone.js): the
// microphone's first channel, at the context's rate (`sampleRate`, often
// 48000), resampled to 16 kHz 16-bit little-endian PCM and posted in frames
// of 100 ms (3200 bytes: the realtime protocol takes 20-1000 ms per frame),
// each with the frame's peak level for the meter.
//
// Resampling: each output sample is the mean of the input over its own
// 1/16000 s window (a box filter, fractional edges weighted), which keeps
// what lies above 8 kHz from folding back into the speech band far better
// than picking samples would, at a cost the audio thread does not notice.
const OUT_RATE = 16000;
const FRAME = OUT_RATE / 10;

class PcmProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE; // input samples per output sample
    this.acc = 0; // sum over the current window
    this.filled = 0; // input samples in it (fractional)
    this.frame = new Int16Array(FRAME);
    this.n = 0;
    this.peak = 0;
  }

  emit(v) {
    const s = Math.max(-1, Math.min(1, v));
    this.peak = Math.max(this.peak, Math.abs(s));
    this.frame[this.n++] = s < 0 ? s * 0x8000 : s * 0x7fff;
    if (this.n === FRAME) {
      const buf = this.frame.buffer;
      this.port.postMessage({ pcm: buf, peak: this.peak }, [buf]);
      this.frame = new Int16Array(FRAME);
      this.n = 0;
      this.peak = 0;
    }
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      const x = input[i];
      const room = this.step - this.filled;
      if (room > 1) {
        this.acc += x;
        this.filled += 1;
      } else {
        // This sample completes the window: its share `room` closes it, the
        // rest starts the next one.
        this.emit((this.acc + x * room) / this.step);
        this.acc = x * (1 - room);
        this.filled = 1 - room;
      }
    }
    return true;
  }
}

registerProcessor('scribe-pcm', PcmProcessor);
