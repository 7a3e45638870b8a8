// The microphone as 16 kHz 16-bit PCM frames: getUserMedia, an AudioContext
// and the pcm-worklet.js processor (loaded by its hashed URL: the
// Content-Security-Policy allows scripts from 'self' only, and build.mjs's
// `?url` import copies the file as an asset).
import workletUrl from './pcm-worklet.js?url';

// Starts capturing; onFrame(ArrayBuffer, peak 0-1) gets each 100 ms frame.
// Returns {stop()}. Throws the browser's error when the microphone is refused
// or missing (NotAllowedError, NotFoundError).
export async function openMicrophone(onFrame) {
  // Browsers give the microphone and audio worklets to secure pages only.
  if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia || !window.AudioWorkletNode) {
    const e = new Error('insecure');
    e.name = window.isSecureContext ? 'NotSupportedError' : 'InsecureContextError';
    throw e;
  }
  // Raw audio: echo cancellation, noise suppression and gain control are
  // made for calls and blur the words a recognizer listens to.
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  let ctx;
  try {
    ctx = new AudioContext();
    await ctx.audioWorklet.addModule(workletUrl);
    const source = ctx.createMediaStreamSource(stream);
    const node = new AudioWorkletNode(ctx, 'scribe-pcm', { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1 });
    node.port.onmessage = (e) => onFrame(e.data.pcm, e.data.peak);
    source.connect(node);
    if (ctx.state === 'suspended') await ctx.resume();
    return {
      label: stream.getAudioTracks()[0]?.label || 'microphone',
      stop() {
        node.port.onmessage = null;
        source.disconnect();
        for (const t of stream.getTracks()) t.stop();
        ctx.close().catch(() => {});
      },
    };
  } catch (e) {
    for (const t of stream.getTracks()) t.stop();
    ctx?.close().catch(() => {});
    throw e;
  }
}

// What to tell a person whose browser refused the microphone.
export function microphoneProblem(e) {
  if (e?.name === 'NotAllowedError') return 'The browser did not allow the microphone. Allow it for this site (the icon in the address bar) and try again.';
  if (e?.name === 'NotFoundError') return 'No microphone was found. Connect one and try again.';
  if (e?.name === 'InsecureContextError')
    return 'The browser offers the microphone only to pages served over https (or from localhost). Open scribe through its https address.';
  if (e?.name === 'NotSupportedError') return 'This browser cannot record audio for live transcription; try a current Chrome, Edge, Firefox or Safari.';
  if (e?.name === 'NotReadableError') return 'The microphone is in use by another program or could not be opened.';
  return `The microphone could not be opened: ${e?.message || e}`;
}
