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
