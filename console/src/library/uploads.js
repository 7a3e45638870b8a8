// The library's uploads: one item per dropped or chosen file, sent with tus
// (tus-js-client) to the server's resumable endpoint, then priced (POST
// /quotes) and started (POST /transcriptions) by the person.
//
// The items live in this module, not in a component, so an upload keeps
// going (and keeps its progress) while the person reads a transcript and
// comes back: the page is a lazily loaded module that stays loaded.
//
// Resuming:
// - a dropped connection: tus-js-client retries by itself while the browser
//   is online; when the browser says it is offline it gives up, and the item
//   waits for the `online` event, then starts again (HEAD, then PATCH from the
//   server's offset), never a timer loop;
// - a page reload: tus-js-client keeps each unfinished upload's URL in
//   localStorage under the file's fingerprint (name, type, size, mtime,
//   endpoint); dropping the same file again finds it and continues from the
//   server's offset. `previousUploads()` lists them so the page can say so.
import { api } from '../api.js';

// tus-js-client (20 KB gzipped) loads with the first file, not with the
// library page, which is the console's first page.
let tusModule;
const loadTus = () => (tusModule ??= import('tus-js-client'));

let nextKey = 1;
const items = [];
const listeners = new Set();

export const uploadItems = () => items.slice();
export function onUploadsChange(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}
function changed(item, patch) {
  if (item) Object.assign(item, patch);
  for (const f of listeners) f();
}

// About 20 chunks per file, 64 KB to 8 MB each: progress and resume points
// every ~5% for a voice memo as for an hour of video, without thousands of
// requests for a 1 GB file (the server streams each PATCH to disk and keeps
// what arrived of a broken one, so the size only bounds the retry's resend).
export const chunkSizeFor = (size) => Math.min(8 << 20, Math.max(64 << 10, Math.ceil(size / 20)));

// The media's length from the browser's own decoder (an <audio>/<video> on a
// blob: URL, which the Content-Security-Policy allows): POST /transcriptions
// requires it for uploads (the server measures the stored file for the
// price). null when the browser cannot read the format; the person types it.
export function mediaDuration(file) {
  return new Promise((resolve) => {
    const el = document.createElement(file.type.startsWith('video/') ? 'video' : 'audio');
    const url = URL.createObjectURL(file);
    let settled = false;
    const done = (d) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      el.removeAttribute('src');
      el.load();
      URL.revokeObjectURL(url);
      resolve(Number.isFinite(d) && d > 0 ? d : null);
    };
    const timer = setTimeout(() => done(null), 15_000);
    el.preload = 'metadata';
    el.muted = true;
    el.onloadedmetadata = () => done(el.duration);
    el.onerror = () => done(null);
    el.src = url;
  });
}

// Unfinished uploads a previous page (or tab) left in localStorage.
export async function previousUploads() {
  // Its keys start with "tus::"; without one there is nothing to load.
  if (!Object.keys(localStorage).some((k) => k.startsWith('tus::'))) return [];
  try {
    const tus = await loadTus();
    const all = await tus.defaultOptions.urlStorage.findAllUploads();
    const active = new Set(items.filter((i) => i.upload?.url).map((i) => i.upload.url));
    return all.filter((e) => !active.has(e.uploadUrl));
  } catch {
    return [];
  }
}
export const forgetPreviousUpload = async (entry) =>
  (await loadTus()).defaultOptions.urlStorage.removeUpload(entry.urlStorageKey);

// tus-js-client keeps each upload's metadata beside its URL in localStorage;
// the upload ticket (an hour's right to create uploads) is left out: resuming
// needs only the URL, whose resume token authorizes that one upload.
const withoutToken = (storage) => ({
  findAllUploads: () => storage.findAllUploads(),
  findUploadsByFingerprint: (fp) => storage.findUploadsByFingerprint(fp),
  removeUpload: (key) => storage.removeUpload(key),
  addUpload: (fp, upload) => storage.addUpload(fp, { ...upload, metadata: { filename: upload.metadata?.filename } }),
});

// Adds files: each is measured, gets a ticket, and uploads at once.
export function addFiles(files) {
  for (const file of files) {
    const item = {
      key: nextKey++,
      kind: 'file',
      file,
      name: file.name,
      size: file.size,
      state: 'preparing', // preparing | uploading | paused | offline | failed | uploaded | started
      sent: 0,
      resumedFrom: null,
      error: null,
      duration: null,
      uploadId: null,
      upload: null,
    };
    items.push(item);
    changed();
    prepare(item);
  }
}

// A link source: priced and started like an upload, nothing to send first.
export function addLink(url, source) {
  items.push({ key: nextKey++, kind: 'link', name: url, url, source, state: 'uploaded', error: null });
  changed();
}

async function prepare(item) {
  try {
    const tus = await loadTus();
    item.duration = await mediaDuration(item.file);
    const ticket = await api('/api/v1/uploads/tus', {
      method: 'POST',
      body: { filename: item.name, file_size: item.size },
    });
    const upload = new tus.Upload(item.file, {
      endpoint: ticket.upload_endpoint,
      chunkSize: chunkSizeFor(item.size),
      retryDelays: [0, 1000, 3000, 5000, 10000],
      metadata: { [ticket.upload_metadata_key]: ticket.upload_token, filename: item.name },
      removeFingerprintOnSuccess: true,
      urlStorage: withoutToken(tus.defaultOptions.urlStorage),
      onProgress: (sent) => changed(item, { sent }),
      onError: (err) => failed(item, err),
      onSuccess: () => {
        // Location is <endpoint>/<id>+<resume token>; the API takes tus/<that>.
        const last = upload.url.split('/').pop();
        changed(item, { state: 'uploaded', sent: item.size, uploadId: `tus/${last}` });
      },
    });
    item.upload = upload;
    const previous = await upload.findPreviousUploads();
    if (previous.length) {
      upload.resumeFromPreviousUpload(previous[0]);
      item.resumedFrom = previous[0].creationTime || true;
    }
    if (!items.includes(item)) return; // removed while preparing
    if (item.state === 'paused') return changed(); // paused while preparing
    changed(item, { state: 'uploading' });
    upload.start();
  } catch (err) {
    changed(item, { state: 'failed', error: err });
  }
}

function failed(item, err) {
  if (!navigator.onLine) {
    changed(item, { state: 'offline', error: null });
    return;
  }
  const status = err.originalResponse?.getStatus?.();
  const e = new Error(
    status
      ? `the upload was refused (HTTP ${status}). Press Resume to try again, or remove it and drop the file again.`
      : 'the upload stopped: the server could not be reached. Check the connection and press Resume.',
  );
  e.code = 'upload_failed';
  changed(item, { state: 'failed', error: e });
}

// Back online: every upload the browser gave up on continues (one event,
// not a retry loop).
addEventListener('online', () => {
  for (const item of items) if (item.state === 'offline') resume(item);
});

export function pause(item) {
  if (item.upload && item.state === 'uploading') item.upload.abort(false);
  changed(item, { state: 'paused' });
}

export function resume(item) {
  if (!item.upload) {
    // Paused or failed before tus started: prepare again.
    changed(item, { state: 'preparing', error: null });
    prepare(item);
    return;
  }
  changed(item, { state: 'uploading', error: null });
  item.upload.start();
}

export function remove(item) {
  // An unfinished upload is terminated (tus DELETE), which also forgets its
  // stored URL; a finished one stays for the server's housekeeping.
  if (item.upload && item.state !== 'uploaded' && item.state !== 'started') item.upload.abort(true).catch(() => {});
  const i = items.indexOf(item);
  if (i >= 0) items.splice(i, 1);
  changed();
}

export function markStarted(item, transcription) {
  changed(item, { state: 'started', transcription });
}

// The body of POST /quotes and POST /transcriptions for this item.
export function requestBody(item, { maxCharge, clientReference, duration } = {}) {
  const body =
    item.kind === 'file'
      ? {
          source: 'upload',
          upload_id: item.uploadId,
          original_filename: item.name,
          duration_seconds: item.duration ?? duration,
        }
      : { source: item.source, url: item.url };
  if (maxCharge !== undefined && maxCharge !== '') body.max_charge_usd = Number(maxCharge);
  if (clientReference) body.client_reference = clientReference;
  return body;
}
