// Test media made on the spot with Debian's flite, sox and ffmpeg, and a
// static file server on 127.0.0.1 that serves it (link sources are fetched
// from there; SCRIBE_ALLOW_PRIVATE_URLS admits loopback in these tests).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';

export const MEDIA_DIR = mkdtempSync(join(tmpdir(), 'scribe-media-'));

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });

// One utterance by a flite voice, as 16 kHz mono wav.
export function say(voice, text, name) {
  const raw = join(MEDIA_DIR, `${name}.raw.wav`);
  const out = join(MEDIA_DIR, `${name}.wav`);
  run('flite', ['-voice', voice, '-t', text, '-o', raw]);
  run('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', out]);
  return out;
}

export function silence(seconds, name) {
  const out = join(MEDIA_DIR, `${name}.wav`);
  run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', out, 'trim', '0', String(seconds)]);
  return out;
}

// Turns [{voice, text}] into one recording with `gap` seconds between turns.
export function dialogue(turns, name, gap = 0.8) {
  const parts = [];
  turns.forEach((t, i) => {
    parts.push(say(t.voice, t.text, `${name}-${i}`));
    parts.push(silence(gap, `${name}-gap-${i}`));
  });
  const out = join(MEDIA_DIR, `${name}.wav`);
  run('sox', [...parts, out]);
  return out;
}

// Converts with ffmpeg (the extension picks the container).
export function convert(input, name, extra = []) {
  const out = join(MEDIA_DIR, name);
  run('ffmpeg', ['-y', '-loglevel', 'error', '-i', input, ...extra, out]);
  return out;
}

export function seconds(path) {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path],
    { encoding: 'utf8' }).trim());
}

// Serves MEDIA_DIR; a name listed in `gone` answers 404.
export async function startMediaServer() {
  const gone = new Set();
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1));
    const path = join(MEDIA_DIR, basename(name));
    if (gone.has(name) || !existsSync(path)) { res.writeHead(404); res.end('not found'); return; }
    const body = readFileSync(path);
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: (path) => `${base}/${basename(path)}`,
    gone: (path) => gone.add(basename(path)),
    write: (name, bytes) => { writeFileSync(join(MEDIA_DIR, name), bytes); return join(MEDIA_DIR, name); },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
