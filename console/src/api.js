// The one way the console calls the API: Bearer token from auth.js, JSON in
// and out, the spec's error envelope turned into ApiError (code, message,
// doc_url, request_id, extras), one silent refresh and retry on a 401, and a
// sign-in redirect when that fails too.
import { accessToken, refresh, signIn } from './auth.js';

export class ApiError extends Error {
  constructor(status, body, fallback) {
    const e = body?.error || {};
    super(e.message || fallback || `request failed (HTTP ${status})`);
    this.status = status;
    this.code = e.code || 'http_' + status;
    this.docUrl = e.doc_url;
    this.requestId = e.request_id;
    this.details = e;
  }
}

async function send(path, { method = 'GET', body, headers = {}, signal }) {
  const token = await accessToken();
  const h = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let payload = body;
  if (body !== undefined && !(body instanceof Blob) && !(body instanceof FormData) && typeof body !== 'string') {
    h['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  return fetch(path, { method, headers: h, body: payload, signal });
}

// Answers the Response (ok or not) after the refresh-and-retry rule.
export async function request(path, options = {}) {
  let res = await send(path, options);
  if (res.status === 401) {
    try {
      await refresh();
    } catch {
      await signIn();
    }
    res = await send(path, options);
    if (res.status === 401) await signIn();
  }
  return res;
}

// JSON calls: answers the parsed body, throws ApiError for non-2xx.
export async function api(path, options = {}) {
  const res = await request(path, options);
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    if (res.ok) throw new ApiError(res.status, null, 'the server answered something that is not JSON');
  }
  if (!res.ok) throw new ApiError(res.status, body, text.slice(0, 200));
  return body;
}

// Raw bodies (transcripts, subtitles): answers {text, headers}, throws ApiError.
export async function apiText(path, options = {}) {
  const res = await request(path, options);
  const text = await res.text();
  if (!res.ok) {
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {}
    throw new ApiError(res.status, body, text.slice(0, 200));
  }
  return { text, headers: res.headers };
}

export const qs = (params) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
};
