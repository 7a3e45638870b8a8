// The browser half of bench/console.sh (read its header): Debian's chromium
// driven by playwright-core (from tests/e2e/node_modules) against the server
// the script started. Signs in through the console's own flow, then measures
//   initial JS    the scripts the library page (/app, the first page) loads,
//                 their bytes and their gzip -9 bytes (zlib, what a gzip
//                 transfer would carry);
//   first rows    navigation start to the first transcript row with text on
//                 screen in the reader of the 12-hour transcript, by a
//                 MutationObserver injected before any page script
//                 (performance.now() is relative to navigation start); the
//                 first load (cold cache) and the p50 of CON_RUNS reloads;
//   frames        intervals between DrawFrame events of the renderer in a
//                 Chromium performance trace while the transcript is scrolled
//                 by mouse wheel (CON_SCROLL_STEPS steps of 600 px, one per
//                 animation frame; between performance marks) and then
//                 jumped to the middle and the end; p50/p95/max, frames over
//                 50 ms; the renderer main thread's tasks (RunTask) over the
//                 whole scroll, the longest and those over 50 ms; plus requestAnimationFrame
//                 deltas measured in the page as a cross-check, DOM nodes and
//                 JS heap after scrolling.
// Same-run reference: the library page's first-contentful-paint.
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tests/e2e/package.json', import.meta.url));
const { chromium } = require('playwright-core');
const BASE = process.env.CON_BASE;
const TID = process.env.CON_TID;
const RUNS = Number(process.env.CON_RUNS || 7);
const STEPS = Number(process.env.CON_SCROLL_STEPS || 120);
// The reader's transcript rows (console/src/reader/): a row with text.
const ROW = process.env.CON_ROW_SELECTOR || '[data-segment-index]';

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const f1 = (x) => Number(x.toFixed(1));

const browser = await chromium.launch({ executablePath: process.env.SCRIBE_CHROMIUM || '/usr/bin/chromium' });
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
const page = await context.newPage();
await page.addInitScript((sel) => {
  globalThis.__firstRow = null;
  const check = () => {
    if (globalThis.__firstRow !== null) return;
    const el = document.querySelector(sel);
    if (el && el.textContent.trim()) globalThis.__firstRow = performance.now();
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true });
}, ROW);

// Sign in through the console (the sign-in form of the authorization server).
await page.goto(`${BASE}/app`);
await page.locator('input[type=password]').waitFor();
await page.locator('input[type=email], input[name=email]').first().fill(process.env.CON_EMAIL);
await page.locator('input[type=password]').fill(process.env.CON_PASSWORD);
await Promise.all([page.waitForURL((u) => u.pathname === '/app'), page.locator('input[type=password]').press('Enter')]);
await page.getByRole('navigation', { name: 'Main' }).waitFor();

// Initial JS of the first page: a fresh load of /app with the cache off.
const cdp = await context.newCDPSession(page);
await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
const scripts = new Map();
const onResponse = async (r) => {
  if (r.request().resourceType() !== 'script') return;
  try {
    scripts.set(r.url(), await r.body());
  } catch {}
};
page.on('response', onResponse);
await page.goto(`${BASE}/app`, { waitUntil: 'networkidle' });
page.off('response', onResponse);
await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
const raw = [...scripts.values()].reduce((n, b) => n + b.length, 0);
const gz = [...scripts.values()].reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);
console.log(`initial JS of /app: ${scripts.size} scripts, ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzipped (target < 100 KB)`);
console.log(`reference: library first-contentful-paint ${fcp === null ? 'n/a' : f1(fcp) + ' ms'} (cache off)`);
console.log(JSON.stringify({ bench: 'console', what: 'initial_js', scripts: scripts.size, bytes: raw, gzip_bytes: gz, library_fcp_ms: fcp }));

// First rows of the 12-hour transcript.
const reader = `${BASE}/app/transcriptions/${TID}`;
const firstRows = [];
for (let i = 0; i <= RUNS; i++) {
  if (i === 0) await cdp.send('Network.clearBrowserCache');
  await page.goto(reader);
  await page.waitForFunction(() => globalThis.__firstRow !== null, null, { timeout: 60_000 });
  firstRows.push(await page.evaluate(() => globalThis.__firstRow));
}
const cold = firstRows[0];
const warm = firstRows.slice(1);
console.log(`first rows of the 12-hour transcript: cold cache ${f1(cold)} ms; warm p50 ${f1(pct(warm, 50))} ms, max ${f1(Math.max(...warm))} ms over ${warm.length} loads (target < 1500 ms)`);
console.log(JSON.stringify({ bench: 'console', what: 'first_rows', cold_ms: cold, warm_ms: warm }));

// Scrolling, under a performance trace.
await page.waitForTimeout(1000); // let the first page of segments settle
const box = await page.locator(ROW).first().boundingBox();
await page.mouse.move(box.x + 20, box.y + 5);
await page.evaluate(() => {
  globalThis.__raf = [];
  let last = performance.now();
  const tick = (t) => {
    globalThis.__raf.push(t - last);
    last = t;
    if (!globalThis.__rafStop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});
await browser.startTracing(page, {
  categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline.frame', 'blink.user_timing'],
});
await page.evaluate(() => performance.mark('wheel-start'));
for (let i = 0; i < STEPS; i++) {
  await page.mouse.wheel(0, 600);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}
await page.evaluate(() => performance.mark('wheel-end'));
// Random access: the middle and the end of the 12 hours (segments fetched by range).
for (const frac of [0.5, 0.999]) {
  await page.evaluate(
    ({ sel, frac }) => {
      let el = document.querySelector(sel);
      while (el && el.scrollHeight <= el.clientHeight + 1) el = el.parentElement;
      (el || document.scrollingElement).scrollTop = frac * ((el || document.scrollingElement).scrollHeight);
    },
    { sel: ROW, frac },
  );
  await page.waitForTimeout(700);
}
const trace = JSON.parse((await browser.stopTracing()).toString('utf8'));
const raf = await page.evaluate(() => {
  globalThis.__rafStop = true;
  return globalThis.__raf.slice(2);
});
const events = trace.traceEvents || trace;
// The wheel phase, between the page's own marks (the jumps after it wait
// 700 ms each with nothing to draw, which is not a slow frame).
const mark = (name) => events.find((e) => e.name === name && e.cat?.includes('blink.user_timing'))?.ts;
const [w0, w1] = [mark('wheel-start'), mark('wheel-end')];
const inWheel = (e) => w0 !== undefined && w1 !== undefined && e.ts >= w0 && e.ts <= w1;
const draws = events.filter((e) => e.name === 'DrawFrame' && inWheel(e)).map((e) => e.ts / 1000).sort((a, b) => a - b);
const gaps = draws.slice(1).map((t, i) => t - draws[i]);
// Main-thread tasks of the renderer over the whole scroll (wheel and jumps):
// a task over 50 ms is a frame the person could see missed.
const mainTid = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')?.tid;
const tasks = events
  .filter((e) => /(^|::)RunTask$/.test(e.name) && e.ph === 'X' && e.tid === mainTid && e.ts >= (w0 ?? 0))
  .map((e) => e.dur / 1000);
const dom = await page.evaluate(() => document.getElementsByTagName('*').length);
const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? null);
console.log(
  `scroll frames (trace DrawFrame, wheel phase): ${draws.length} frames, interval p50 ${f1(pct(gaps, 50))} ms, p95 ${f1(pct(gaps, 95))} ms, max ${f1(Math.max(...gaps))} ms, ${gaps.filter((g) => g > 50).length} over 50 ms (the driver sends one wheel step per round trip, so intervals also hold its pace)`,
);
console.log(
  `renderer main-thread tasks while scrolling (trace RunTask, wheel and jumps): ${tasks.length}, p95 ${f1(pct(tasks, 95))} ms, max ${f1(Math.max(...tasks))} ms, ${tasks.filter((d) => d > 50).length} over 50 ms`,
);
console.log(
  `scroll frames (requestAnimationFrame): ${raf.length} frames, p50 ${f1(pct(raf, 50))} ms, p95 ${f1(pct(raf, 95))} ms, max ${f1(Math.max(...raf))} ms; DOM ${dom} elements, JS heap ${heap === null ? 'n/a' : (heap / 1048576).toFixed(1) + ' MiB'} after scrolling`,
);
console.log(JSON.stringify({ bench: 'console', what: 'scroll', draw_frames: draws.length, draw_p50_ms: pct(gaps, 50), draw_p95_ms: pct(gaps, 95), draw_max_ms: Math.max(...gaps), over_50ms: gaps.filter((g) => g > 50).length, tasks: tasks.length, task_p95_ms: pct(tasks, 95), task_max_ms: Math.max(...tasks), tasks_over_50ms: tasks.filter((d) => d > 50).length, raf_p50_ms: pct(raf, 50), raf_p95_ms: pct(raf, 95), raf_max_ms: Math.max(...raf), dom_elements: dom, js_heap_bytes: heap }));
await browser.close();
