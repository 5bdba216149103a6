// Shared by the end-to-end tests and the benchmark: serve dist/, open the app in headless
// Chromium, type and wait for the painted result, ask the native CLI for reference numbers.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, before } from 'node:test';
import { fileURLToPath } from 'node:url';

import { launch } from './browser.mjs';
import { serveMany } from './server.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = process.env.ATTNLAB_DIST ?? path.join(ROOT, 'dist');
export const ARTIFACTS = process.env.ATTNLAB_ARTIFACTS ?? path.join(ROOT, 'target', 'e2e');
const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
export const CLI = process.env.ATTNLAB_CLI ?? path.join(TARGET, 'debug', 'attnlab');

/** Opens the app; resolves once the first result is painted. `errors` collects every
 * uncaught exception and console error of every page (and frame, and worker) opened in its
 * browser context; `failOnErrors` checks them after each test. */
export async function openApp({ webgpu = true, width = 1280, height = 800, lang = 'ko-KR', query = '', mounts = {} } = {}) {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) {
    throw new Error(`${DIST}/index.html is missing: run \`trunk build --release\` first`);
  }
  const srv = await serveMany({ '/': DIST, ...mounts });
  const { context, close } = await launch({ webgpu, width, height, lang });
  const errors = [];
  const watch = (p) => {
    p.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
    // (a dedicated worker's console messages arrive here too, as the page's)
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
    });
  };
  // the pages open now, and each one opened later (the 'page' event)
  context.pages().forEach(watch);
  context.on('page', watch);
  const page = context.pages()[0] ?? (await context.newPage());
  // CSP violations, if any, are collected for the tests
  await context.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolations.push(`${e.violatedDirective}: ${e.blockedURI}`),
    );
  });
  const started = Date.now();
  await page.goto(srv.url + query);
  await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 180_000 });
  const firstPaintMs = Date.now() - started;
  return {
    page,
    context,
    srv,
    errors,
    // how many of `errors` the last check saw, and what the running test allows (allowErrors)
    errorsChecked: 0,
    allowedErrors: [],
    firstPaintMs,
    close: async () => {
      await close();
      await srv.close();
    },
  };
}

/**
 * Fails each test of the enclosing `describe` on any uncaught exception or console error in
 * the app's browser context (`app()` → what openApp returned) since the test before it, unless
 * the test provoked it on purpose and said so with `allowErrors`. Checked when the test ends,
 * so an error in one test cannot hide behind a later one.
 */
export function failOnErrors(app) {
  afterEach(async () => {
    const a = app();
    if (!a) return;
    // an error logged by the last step's work reaches the listeners a moment later
    await new Promise((r) => setTimeout(r, 100));
    const fresh = a.errors.slice(a.errorsChecked);
    const allowed = a.allowedErrors;
    a.errorsChecked = a.errors.length;
    a.allowedErrors = [];
    const unexpected = fresh.filter((e) => !allowed.some((re) => re.test(e)));
    assert.deepEqual(unexpected, [], 'uncaught exceptions or console errors during the test');
  });
}

/** The app of one `describe`, as its tests read it (`const { page } = app`): opened with
 * `openApp(options)` before them, closed after them, and each test failed on an error it did
 * not allow (`failOnErrors`). Call it inside the `describe`. */
export function suiteApp(options) {
  let app;
  before(async () => {
    app = await openApp(options);
  });
  after(async () => {
    await app?.close();
  });
  failOnErrors(() => app);
  // the tests hold this object from the start; it stands for the app once it is open
  return new Proxy(
    {},
    {
      get: (_, key) => app?.[key],
      set: (_, key, value) => {
        app[key] = value;
        return true;
      },
    },
  );
}

/** Lets the running test provoke errors that match `patterns` (checked by `failOnErrors`):
 * name each error the test causes on purpose, as narrowly as its text allows. */
export function allowErrors(app, ...patterns) {
  app.allowedErrors.push(...patterns);
}

/** What the page asked the server for since request number `from`, less the browser's own
 * check for a new build of the service worker (`/sw.js`: it carries nothing of the page's). */
export const requestsSince = (srv, from) => srv.requests.slice(from).filter((r) => r !== '/sw.js');

/** A screenshot of the whole page as a reader scrolling through it sees it. Blocks far off
 * screen skip rendering (content-visibility: auto in style.css) and a full-page capture
 * does not scroll, so it would show them empty: they are drawn for the capture. */
export async function fullPageShot(page, file) {
  const style = await page.addStyleTag({
    content: 'main > .deferred, main > section.card { content-visibility: visible !important; }',
  });
  try {
    await page.screenshot({ path: file, fullPage: true });
  } finally {
    await style.evaluate((s) => s.remove());
  }
}

/** The latest painted result ({ generation, text, tokens, latencyMs, forwardMs, … }). */
export const painted = (page) => page.evaluate(() => ({ ...window.__attnlab.painted }));

/** Waits until the page has painted a result for exactly the text box's current value. */
export async function settled(page, timeout = 120_000) {
  try {
    await page.waitForFunction(
      () =>
        window.__attnlab?.painted?.text === document.querySelector('#text').value &&
        !window.__attnlab.stale,
      null,
      { timeout },
    );
  } catch (e) {
    // say what is not current: the result, or which views still wait
    const why = await page.evaluate(() => ({
      stale: window.__attnlab?.stale,
      paintedText: window.__attnlab?.painted?.text?.slice(-60),
      box: document.querySelector('#text')?.value.slice(-60),
      waiting: [...document.querySelectorAll('.deferred[data-waiting]')].map((d) => d.querySelector('[id]')?.id ?? '?'),
    })).catch(() => ({}));
    throw new Error(`${e.message}: not settled ${JSON.stringify(why)}`);
  }
  return painted(page);
}

/**
 * Waits until a model served in models/ (opened by a `model=…` link) has loaded and painted
 * its first result, after the bundled model's: fails with the page's message if it did not
 * load. (The bench scripts time the rest from the Resource Timing entry of its download.)
 */
export async function servedModelPainted(page, timeout = 120_000) {
  await page.waitForSelector('#own-status[data-state=loaded], #own-status[data-state=failed]', { timeout: 300_000 });
  if ((await page.locator('#own-status').getAttribute('data-state')) !== 'loaded') {
    throw new Error(`the served model did not load: ${await page.locator('#own-status').textContent()}`);
  }
  await page.waitForFunction(() => {
    const fetched = performance.getEntriesByType('resource').find((e) => e.name.includes('/models/'));
    return fetched && window.__attnlab.log.some((r) => r.at > fetched.responseEnd);
  }, null, { timeout });
}

/** Waits until every view off screen has caught up with the page's state (they update after
 * the visible ones, when the page is idle). */
export const caughtUp = (page) => page.waitForFunction(() => !window.__attnlab.stale);

/** The URL's fragment once written (the page writes it at idle time, coalesced). */
export async function currentHash(page) {
  await caughtUp(page);
  return page.evaluate(() => location.hash);
}

/** Waits for a result newer than generation `gen`, painted, with every view caught up
 * (views off screen update after the visible ones, when the page is idle). */
export async function nextResult(page, gen, timeout = 120_000) {
  await page.waitForFunction(
    (g) => window.__attnlab.painted.generation > g && !window.__attnlab.stale,
    gen,
    { timeout },
  );
  return painted(page);
}

/** Replaces the text box's content (one input event) and waits for its result. */
export async function setText(page, text) {
  await page.locator('#text').fill(text);
  return settled(page);
}

/** The CLI's trace (JSON) for `text`, one head. */
export function cliTrace(text, layer, head, extra = []) {
  const out = execFileSync(
    CLI,
    ['--model', path.join(ROOT, 'assets', 'model'), 'trace', text, '--layer', String(layer), '--head', String(head), '--format', 'json', ...extra],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  return JSON.parse(out);
}

/** The first five tokens of a next-token list on the page (`list`: '#next-last', …) are the
 * CLI's (`next`: its JSON's `next`), in order, each with the CLI's probability to the
 * precision the page shows it with ("12.34%": within 0.005 points; "12.3 %": 0.05). */
export async function assertTopFiveIsCli(page, list, next, what = list) {
  const shown = await page.$$eval(`${list} li`, (ls) =>
    ls.slice(0, 5).map((l) => ({ id: Number(l.dataset.token), pct: l.querySelector('.num').textContent })),
  );
  assert.equal(shown.length, 5, `${what}: five tokens shown`);
  assert.ok(next.length >= 5, `${what}: the CLI gave ${next.length} tokens`);
  shown.forEach(({ id, pct }, i) => {
    assert.equal(id, next[i].id, `${what}: token ${i + 1} is the CLI's`);
    const m = pct.match(/^(\d+(?:\.(\d+))?) ?%$/);
    assert.ok(m, `${what}: token ${i + 1}'s probability as shown: ${JSON.stringify(pct)}`);
    const half = 0.5 * 10 ** -(m[2]?.length ?? 0);
    const diff = Math.abs(Number(m[1]) - next[i].prob * 100);
    assert.ok(diff <= half + 1e-4, `${what}: token ${i + 1} shows ${pct}, the CLI ${(next[i].prob * 100).toFixed(4)}%`);
  });
}

/** A number as the page prints it (crates/app compare.rs `fmt_num`: "0.1234", "−0.1234",
 * "1.234e−5", "−∞"), from a number computed here in f64 and rounded to f32 as the page does. */
export function fmtShown(x) {
  const f = Math.fround(x);
  if (f === -Infinity) return '−∞';
  const t = f !== 0 && (Math.abs(f) >= 1e5 || Math.abs(f) < 5e-5) ? f.toExponential(3).replace('e+', 'e') : f.toFixed(4);
  return t.replace(/-/g, '−');
}

/** A number as the page prints it ("−0.1234", "−∞") → a JS number. */
export function parseShown(s) {
  const t = s.trim().replace(/−/g, '-');
  if (t === '-∞') return -Infinity;
  const x = Number(t);
  if (Number.isNaN(x)) throw new Error(`not a number: ${JSON.stringify(s)}`);
  return x;
}

export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

// Korean and English, like the lesson; long enough for 128 tokens
export const SOURCE =
  '나는 어제 산 커피를 오늘 마셨다. Which do you like better, coffee or tea? ' +
  '그는 아침마다 도서관에 가서 책을 읽었다. The model looks at every earlier word at once. ' +
  '우리는 주말에 공원에서 친구들과 점심을 먹었다. Attention weights in each row sum to one. ' +
  '동생은 학교에서 돌아오자마자 숙제를 끝냈다. She bought a new notebook and wrote down her plans. ' +
  '비가 와서 우리는 집에서 영화를 보기로 했다. ';

// what the benchmarks type, one character per keystroke
export const TYPED = [...' 커피를 마셨다 and tea'];

/** The longest prefix of `source` (SOURCE unless given; cut at a space) that the page runs
 * as ≤ t tokens. `count(text)`, where given, says how many tokens a text is instead of the
 * page's run of it (a software GPU takes minutes over a long text). */
export async function baseText(page, t, source = SOURCE, count = undefined) {
  const cuts = [...source.matchAll(/ /g)].map((m) => m.index);
  let lo = 0;
  let hi = cuts.length - 1;
  let best = source.slice(0, cuts[0]);
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const text = source.slice(0, cuts[mid]);
    let tokens;
    if (count) tokens = await count(text);
    else {
      await page.locator('#text').fill(text);
      tokens = (await settled(page)).tokens;
    }
    if (tokens <= t) {
      best = text;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** Moves the selected head's focused cell to (i, j) with the keyboard. */
export async function focusCell(page, i, j) {
  await page.locator('#head-map').focus();
  for (let step = 0; step < 400; step++) {
    const at = await page.locator('#cell-readout').getAttribute('data-cell');
    if (at === null) {
      await page.keyboard.press('Home');
      continue;
    }
    const [ci, cj] = at.split(',').map(Number);
    if (ci === i && cj === j) return;
    await page.keyboard.press(ci < i ? 'ArrowDown' : ci > i ? 'ArrowUp' : cj < j ? 'ArrowRight' : 'ArrowLeft');
  }
  throw new Error(`could not reach cell ${i},${j}`);
}
