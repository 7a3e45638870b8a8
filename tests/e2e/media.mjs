// Test media made on the spot with Debian's flite, sox and ffmpeg, and a
// static file server on 127.0.0.1 that serves it (link sources are fetched
// from there; SCRIBE_ALLOW_PRIVATE_URLS admits loopback in these tests).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, existsSync, writeFileSync, copyFileSync, renameSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, basename } from 'node:path';

export const MEDIA_DIR = mkdtempSync(join(tmpdir(), 'scribe-media-'));

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });

// Recordings are made once per test run and shared by the files that run
// concurrently: the test command points SCRIBE_E2E_MEDIA_CACHE at one folder,
// where a recording is kept under a digest of what made it. `make(path)`
// writes the recording; a cached copy is used when there is one. The copy
// into the cache is renamed into place, so a reader never sees half a file.
const CACHE = process.env.SCRIBE_E2E_MEDIA_CACHE;
function cached(key, out, make) {
  if (!CACHE) { make(out); return out; }
  mkdirSync(CACHE, { recursive: true });
  const kept = join(CACHE, createHash('sha256').update(JSON.stringify(key)).digest('hex') + '.wav');
  if (existsSync(kept)) { copyFileSync(kept, out); return out; }
  make(out);
  const tmp = `${kept}.${process.pid}.tmp`;
  copyFileSync(out, tmp);
  renameSync(tmp, kept);
  return out;
}

// One utterance by a flite voice, as 16 kHz mono wav.
export function say(voice, text, name) {
  const raw = join(MEDIA_DIR, `${name}.raw.wav`);
  const out = join(MEDIA_DIR, `${name}.wav`);
  return cached(['say', voice, text], out, (path) => {
    run('flite', ['-voice', voice, '-t', text, '-o', raw]);
    run('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', path]);
  });
}

export function silence(seconds, name) {
  const out = join(MEDIA_DIR, `${name}.wav`);
  run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', out, 'trim', '0', String(seconds)]);
  return out;
}

// Turns [{voice, text}] into one recording with `gap` seconds between turns.
// Its turns are kept as `${name}-${i}.wav` too (tests measure them).
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

// Four passages on clearly different subjects (bread, tides, football, a
// garden), about 40 s each: the enrichment and ask tests' recording.
export const FOUR_TOPICS = [
  { voice: 'slt', text: 'Baking bread at home starts with flour, water, salt and yeast. Mix the flour and water into ' +
    'a rough dough, then let it rest for twenty minutes. Knead the dough on a floured table until it feels smooth ' +
    'and elastic. Let the dough rise in a warm kitchen for two hours, until it doubles in size. Shape the loaf, ' +
    'place it in a hot oven, and bake the bread for forty minutes until the crust is golden brown. Let the bread ' +
    'cool before you cut it, or the inside of the loaf will be sticky. A good sourdough starter needs flour and ' +
    'water every day, and it makes the bread taste a little sour. Rye flour gives a dark and heavy loaf, while ' +
    'white flour gives a light bread with large holes.' },
  { voice: 'rms', text: 'The ocean tides are caused by the pull of the moon. As the earth turns, the water on the ' +
    'side facing the moon rises into a high tide. Most coasts see two high tides and two low tides every day. When ' +
    'the sun and the moon line up, the tides are stronger, and sailors call them spring tides. Fishermen study the ' +
    'tide tables carefully, because the water near the harbor can rise and fall by several meters. At low tide the ' +
    'beach is wide and the boats rest on the sand. Strong winds from the sea can push the water even higher, and ' +
    'then the waves flood the roads along the coast. In some narrow bays the tide comes in faster than a person ' +
    'can walk, so visitors must watch the water.' },
  { voice: 'awb', text: 'Last night the football match between the two city teams was exciting. The home team ' +
    'scored the first goal after ten minutes with a powerful shot. The visiting team answered before half time, ' +
    'when their striker headed the ball into the net. In the second half the goalkeeper made three great saves. ' +
    'The crowd cheered loudly when the captain scored the winning goal in the final minute of the game. The coach ' +
    'said the players had trained hard all season for this match. Next week the team travels to the north for ' +
    'the cup final, and the tickets are already sold out. The young defender was named player of the match after ' +
    'he blocked two shots on the goal line. The referee showed four yellow cards.' },
  { voice: 'slt', text: 'In the garden this spring we planted tomatoes, beans and carrots. Tomato plants need plenty ' +
    'of sunlight and water every morning. We added compost to the soil and tied each plant to a wooden stick so it ' +
    'grows straight. Pull the weeds every week and watch for insects on the leaves. By the end of summer the ' +
    'tomatoes turn red and sweet, ready to pick and share with the neighbors. The carrots stay in the ground until ' +
    'the first cold nights of autumn. In winter we cover the empty beds with leaves and straw, so the soil stays ' +
    'soft and rich for the next spring. Next year we want to grow potatoes and onions, and maybe a small apple ' +
    'tree beside the fence. Fresh vegetables from the garden taste much better.' },
];

// A radio conversation on city gardens, three voices taking turns (slt,
// rms, awb, twice): the diarization and streaming tests' recording.
export const GARDEN_TALK = [
  { voice: 'slt', text: 'Good evening and welcome to the program. Tonight we talk about gardens in the city.' },
  { voice: 'rms', text: 'Thank you for having me. I have been growing vegetables on my roof for ten years.' },
  { voice: 'awb', text: 'In my neighbourhood the council gave us an empty lot behind the school.' },
  { voice: 'slt', text: 'How did the children react when the garden opened?' },
  { voice: 'rms', text: 'They loved it. Every class has a small bed and they water it every morning.' },
  { voice: 'awb', text: 'Water is a real problem in summer. We collect rain in large barrels.' },
];

// A media server that holds every request until released: the worker's
// download hangs there, so its transcription stays processing.
export async function hangingMediaServer() {
  const held = [];
  let released = false, seen;
  const requested = new Promise((resolve) => { seen = resolve; });
  const srv = createServer((req, res) => {
    seen();
    if (released) { res.writeHead(404); res.end('gone'); } else held.push(res);
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${srv.address().port}/slow.wav`,
    requested,
    release() {
      released = true;
      for (const res of held.splice(0)) { res.writeHead(404); res.end('gone'); }
    },
    close: () => new Promise((resolve) => { srv.closeAllConnections?.(); srv.close(resolve); }),
  };
}

// --- clips: video fixtures, downloads and what a rendered file holds ---------

// A video with a moving test pattern (ffmpeg's testsrc2) and `audio` as its
// sound track, as MP4 (H.264 + AAC), as long as the audio.
export function videoWithAudio(audio, name, { size = '640x360' } = {}) {
  const out = join(MEDIA_DIR, name);
  run('ffmpeg', ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=30`, '-i', audio,
    '-map', '0:v', '-map', '1:a', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'aac',
    '-shortest', out]);
  return out;
}

// GET url into a file of MEDIA_DIR with curl (binary-safe, no auth).
// Returns {status, contentType, path, bytes}.
export function download(url, name) {
  const path = join(MEDIA_DIR, name);
  const out = execFileSync('curl', ['-sS', '-o', path, '-w', '%{http_code} %{content_type}', '--max-time', '60', url],
    { encoding: 'utf8' });
  const i = out.indexOf(' ');
  return { status: Number(out.slice(0, i)), contentType: out.slice(i + 1), path,
    bytes: existsSync(path) ? readFileSync(path).length : 0 };
}

// ffprobe's view of a file: {format: {format_name, duration}, streams: [{codec_type, codec_name, width, height, duration}]}.
export function probe(path) {
  return JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries',
    'format=format_name,duration:stream=codec_type,codec_name,width,height,duration', '-of', 'json', path],
  { encoding: 'utf8' }));
}

// The frame shown at `t` seconds, as rgb24: {width, height, data}.
export function grabFrame(path, t) {
  const v = probe(path).streams.find((s) => s.codec_type === 'video');
  if (!v) throw new Error(`${path} has no video stream`);
  const data = execFileSync('ffmpeg', ['-v', 'error', '-ss', t.toFixed(3), '-i', path, '-frames:v', '1',
    '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { maxBuffer: 64 << 20 });
  if (data.length !== v.width * v.height * 3)
    throw new Error(`frame at ${t} s of ${path}: ${data.length} bytes, expected ${v.width}x${v.height}x3`);
  return { width: v.width, height: v.height, data };
}

const luma = (r, g, b) => 0.299 * r + 0.587 * g + 0.114 * b;

// Where the captions of a clip frame are drawn, from domain/clip_captions.cpp's
// caption_layout (font 6.6 % of the short side, box padding 1.3 %, side
// margins 7 % of the width; a lower line sits 18 % (portrait) or 9 % above the
// bottom edge, an upper one as far below the top): a rectangle holding up to
// three lines of text and the box around them. `plain` is a band of the same
// frame that neither captions, title nor the audiogram's waveform use (the
// waveform sits mid-frame, lower when the captions are in the middle or at
// the top): above the middle, or near the bottom for upper captions.
export function captionRegions(width, height, position = 'lower') {
  const portrait = height > width;
  const base = Math.min(width, height);
  const font = Math.round(base * 0.066);
  const pad = Math.round(base * 0.013);
  const marginH = Math.round(width * 0.07);
  let y0, y1;
  if (position === 'lower') {
    const bottom = height - Math.round(height * (portrait ? 0.18 : 0.09));
    [y0, y1] = [bottom - 3 * font - 2 * pad, bottom + 2 * pad];
  } else if (position === 'upper') {
    const top = Math.round(height * (portrait ? 0.12 : 0.08));
    [y0, y1] = [top - 2 * pad, top + 3 * font + 2 * pad];
  } else {
    [y0, y1] = [Math.round(height / 2 - 1.5 * font - 2 * pad), Math.round(height / 2 + 1.5 * font + 2 * pad)];
  }
  return {
    font, pad,
    caption: { x0: marginH - pad - 4, x1: width - marginH + pad + 4, y0, y1 },
    plain: position === 'upper'
      ? { x0: marginH, x1: width - marginH, y0: Math.round(height * 0.8), y1: Math.round(height * 0.95) }
      : { x0: marginH, x1: width - marginH, y0: Math.round(height * 0.16), y1: Math.round(height * 0.33) },
  };
}

export function meanLuma(frame, { x0, x1, y0, y1 }) {
  let sum = 0, n = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
    const i = (y * frame.width + x) * 3;
    sum += luma(frame.data[i], frame.data[i + 1], frame.data[i + 2]);
    n++;
  }
  return sum / n;
}

// Pixel counts of a rectangle of a frame: bright (white text: every channel
// above 200), red (r > 180, g and b below 70), saturated (a pure colour: one
// channel above 200, another below 60), dark (luma at least 8 below bgLuma),
// the bounding box of the bright pixels (text), and boxBand: the share of
// dark pixels in the rows 4-10 px above the tallest glyph across the text's
// width, which lie inside a caption box and on plain background without one.
export function regionStats(frame, { x0, x1, y0, y1 }, bgLuma) {
  const { width, height, data } = frame;
  const at = (x, y) => { const i = (y * width + x) * 3; return [data[i], data[i + 1], data[i + 2]]; };
  let bright = 0, red = 0, saturated = 0, dark = 0, total = 0;
  let top = Infinity, bottom = -1, left = Infinity, right = -1;
  for (let y = Math.max(0, y0); y < Math.min(height, y1); y++) {
    for (let x = Math.max(0, x0); x < Math.min(width, x1); x++) {
      const [r, g, b] = at(x, y);
      total++;
      if (Math.min(r, g, b) > 200) {
        bright++;
        top = Math.min(top, y); bottom = Math.max(bottom, y); left = Math.min(left, x); right = Math.max(right, x);
      }
      if (r > 180 && g < 70 && b < 70) red++;
      if (Math.max(r, g, b) > 200 && Math.min(r, g, b) < 60) saturated++;
      if (bgLuma !== undefined && luma(r, g, b) < bgLuma - 8) dark++;
    }
  }
  let band = 0, bandDark = 0;
  if (bright > 0 && bgLuma !== undefined) {
    for (let y = Math.max(0, top - 10); y <= top - 4; y++) for (let x = left; x <= right; x++) {
      band++;
      if (luma(...at(x, y)) < bgLuma - 8) bandDark++;
    }
  }
  return { total, bright, red, saturated, dark, text: bright ? { top, bottom, left, right } : null,
    boxBand: band ? bandDark / band : 0 };
}

// Sharp edges of a rectangle: horizontally neighbouring pixels whose luma
// differs by more than 40 (a blurred picture has next to none).
export function sharpEdges(frame, { x0, x1, y0, y1 }) {
  let n = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x + 1 < x1; x++) {
    const i = (y * frame.width + x) * 3;
    const d = frame.data;
    if (Math.abs(luma(d[i], d[i + 1], d[i + 2]) - luma(d[i + 3], d[i + 4], d[i + 5])) > 40) n++;
  }
  return n;
}

// An SRT document as cues [{index, start, end, text}] (seconds); throws
// unless every block is well-formed and numbered 1, 2, 3...
export function parseSrt(text) {
  const blocks = text.replace(/\r\n/g, '\n').trim().split(/\n\n+/).filter((b) => b.trim() !== '');
  const time = (h, m, s, ms) => Number(h) * 3600 + Number(m) * 60 + Number(s) + Number(ms) / 1000;
  return blocks.map((b, i) => {
    const lines = b.split('\n');
    const m = /^(\d\d):(\d\d):(\d\d),(\d{3}) --> (\d\d):(\d\d):(\d\d),(\d{3})$/.exec(lines[1] ?? '');
    if (lines[0] !== String(i + 1) || !m || lines.length < 3) throw new Error(`malformed SRT cue ${i + 1}: ${JSON.stringify(b)}`);
    return { index: i + 1, start: time(m[1], m[2], m[3], m[4]), end: time(m[5], m[6], m[7], m[8]),
      text: lines.slice(2).join('\n') };
  });
}
