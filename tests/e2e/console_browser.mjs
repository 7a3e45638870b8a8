// The web console (issue 36) in a real browser: Debian's chromium driven by
// playwright-core against the real server, which serves the built console
// (console/dist, built by scripts before the tests run).
//   const c = await startConsole({ workers: true });
//   const page = await c.newPage();        // signed in as c.user
//   await c.axe(page, 'library');          // no serious or critical violation
//   await c.shot(page, 'library');         // screenshot under the test output
//   await c.close();
// Every page's console errors and CSP violations are collected in
// c.problems(): a test asserts it is empty at its end.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from './harness.mjs';
import { newUser } from './oauth_helpers.mjs';

const CHROMIUM = process.env.SCRIBE_CHROMIUM || '/usr/bin/chromium';
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
// Screenshots of every page for a person to look at (README shows two).
export const SHOTS = process.env.SCRIBE_CONSOLE_SHOTS || join(process.env.SCRIBE_TEST_OUTPUT || '/tmp/scribe-test-output', 'console');

// launchArgs: extra chromium flags (the record test's fake microphone).
export async function startConsole({ workers = false, extraEnv = {}, launchArgs = [], server: given } = {}) {
  const server =
    given ?? (await startServer({ workers, extraEnv: { SCRIBE_RATE_LIMIT_PER_MINUTE: '100000', ...extraEnv } }));
  const user = newUser({ balance: 20 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: launchArgs });
  const problems = [];
  const contexts = [];

  // A new browser context (own storage) with a page signed in through the
  // console's own flow: /app redirects to the sign-in form, the form posts,
  // the authorization server redirects to /app/callback, which redeems the code.
  async function newPage({ path = '/app', viewport = { width: 1280, height: 800 }, signIn = true, contextOptions = {} } = {}) {
    const context = await browser.newContext({ viewport, ...contextOptions });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text()))
        problems.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`${page.url()}: uncaught ${e.message}`));
    if (!signIn) {
      await page.goto(server.url + path);
      return page;
    }
    await page.goto(server.url + path);
    await signInOn(page);
    await page.waitForURL((u) => u.pathname === new URL(server.url + path).pathname && !u.pathname.endsWith('/callback'));
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    return page;
  }

  async function signInOn(page) {
    const password = page.locator('input[type=password]');
    await password.waitFor();
    await page.locator('input[type=email], input[name=email]').first().fill(user.email);
    await password.fill(user.password);
    await Promise.all([page.waitForURL(/\/app(\/|$|\?)/), password.press('Enter')]);
  }

  // axe-core on the page as it is now: no serious or critical violation.
  async function axe(page, label) {
    await page.evaluate(AXE);
    const result = await page.evaluate(() =>
      globalThis.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
    );
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')}`),
      [],
      `axe-core on ${label}`,
    );
    return result;
  }

  async function shot(page, name) {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
  }

  return {
    server,
    user,
    browser,
    newPage,
    signInOn,
    axe,
    shot,
    problems: () => problems.slice(),
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close();
      if (!given) await server.stop();
    },
  };
}
