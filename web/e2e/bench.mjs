// Benchmark: keystroke → painted latency of the app in headless Chromium, per backend —
// `webgpu` (forced with `#backend=webgpu`; SwiftShader here), `cpu` (a browser without WebGPU,
// `#backend=cpu`) and `auto` (a browser with WebGPU, no choice in the URL) — at about 16, 64
// and 128 tokens: latency, forward (as the page sees it: forward + readback or + transfer
// from the worker), page-side time (latency − forward) and the longest main-thread task while
// typing (PerformanceObserver 'longtask'); plus what the first load transfers (gzipped) and
// the time to the first painted result, and the floor under page-side time: how long the
// browser takes from a random moment to the frame after its next repaint with nothing to do.
//
//   node web/e2e/bench.mjs [--samples 100] [--backends webgpu,cpu,auto] [--sizes 16,64,128]
//                          [--model smollm2] [--source FILE] [--paste-timeout 600]
//                          [--view SELECTOR] [--height PX] [--query-back K] [--present]
//
// `--model smollm2`: the same on SmolLM2-135M (served in models/ by the serve and test
// commands), opened through the URL (`model=smollm2`); the first-result time is then from the
// start of its download to its first painted result. With the CPU worker, each row also
// gives the worker's wasm memory after it. `--source FILE`: the texts are cut from FILE
// (tools/long/long-en.txt has 1,050 SmolLM2 tokens) instead of the built-in Korean and English
// one (about 128 tokens). Each row also gives the page's JS heap after it and the time from
// pasting its whole text into an empty box to the painted result (waited for up to
// `--paste-timeout` seconds). `--view SELECTOR`: the element is scrolled into view before
// typing (e.g. `#flow-strip`, whose follow-up job runs in the worker after each result while
// it is near the screen), and each row says in how many samples it was within 200 px of the
// screen when the result was painted (typing scrolls the text box back into view: give the
// page a viewport tall enough for both, `--height PX`, default 800). `--query-back K`: the
// K-th token from the end is picked as the query before typing (it stays the query while the
// text grows; on a slim result the next tokens after it are asked of the worker).
// `--present`: the `--view` element's view is then presented (the F key), alone below the
// text box, so that it stays on screen while typing in any viewport. Each row finds its text's length with the native CLI
// (target/release/attnlab where built) instead of running each candidate text in the page.
//
// Each sample is one character typed at the end of a text of T − 6 … T + 6 tokens (capped
// below the context; measured
// from the input event to the frame after the repaint); past T + 6 the text is reset to its
// base (not measured). Typing at the end is the incremental path.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { execFileSync } from 'node:child_process';

import { ARTIFACTS, CLI, DIST, ROOT, TYPED, baseText, openApp, quantile, servedModelPainted, settled } from './common.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SAMPLES = Number(arg('samples', '100'));
const BACKENDS = arg('backends', 'webgpu,cpu,auto').split(',');
const SIZES = arg('sizes', '16,64,128').split(',').map(Number);
const MODEL = arg('model', '');
const SOURCE_TEXT = arg('source', '') ? fs.readFileSync(arg('source', ''), 'utf8') : undefined;
// how long a pasted text may take to be painted (s): a software GPU over ≈ 1,000 tokens takes
// ten minutes
const PASTE_TIMEOUT_S = Number(arg('paste-timeout', '600'));
const VIEW = arg('view', '');
const HEIGHT = Number(arg('height', '800'));
const QUERY_BACK = Number(arg('query-back', '0'));
const PRESENT = process.argv.includes('--present');
if (PRESENT && !VIEW) throw new Error('--present presents the --view element\'s view: give --view');

// the model's context
const CONTEXT = MODEL === 'smollm2' ? 8192 : 128;

const bar = (done, total, label) => {
  const w = 30;
  const n = Math.round((done / total) * w);
  process.stderr.write(`\r  ${label} [${'#'.repeat(n)}${'.'.repeat(w - n)}] ${done}/${total}`);
  if (done === total) process.stderr.write('\n');
};

// the URL each backend opens (`auto`: whatever the page picks in a browser with WebGPU)
const QUERY = { webgpu: '#backend=webgpu', cpu: '#backend=cpu', auto: '' };

// the native CLI that counts a text's tokens (the release build where there is one: the
// debug build takes a minute over 1,000 tokens)
const RELEASE_CLI = path.join(path.dirname(path.dirname(CLI)), 'release', 'attnlab');
const COUNTING_CLI = fs.existsSync(RELEASE_CLI) ? RELEASE_CLI : CLI;
const MODEL_PATH = MODEL === 'smollm2' ? path.join(DIST, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf') : path.join(ROOT, 'assets', 'model');

/** How many tokens the model runs `text` as, by the native CLI (the page's tokenizer and the
 * CLI's are the same code; the e2e tests compare their tokens). */
function cliTokens(text) {
  const out = execFileSync(COUNTING_CLI, ['--model', MODEL_PATH, 'trace', text, '--layer', '0', '--head', '0', '--format', 'json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  return JSON.parse(out).heads[0].weights.length;
}

/** The CPU worker's wasm memory (bytes), where the page has one. */
async function workerMemory(page) {
  for (const w of page.workers()) {
    const bytes = await w.evaluate(() => self.__attnlabMemory?.buffer.byteLength ?? null).catch(() => null);
    if (bytes) return bytes;
  }
  return null;
}

async function measure(backend) {
  const model = MODEL ? `${QUERY[backend] ? '&' : '#'}model=${MODEL}` : '';
  const app = await openApp({ webgpu: backend !== 'cpu', query: QUERY[backend] + model, height: HEIGHT });
  const { page } = app;
  let modelMs = null;
  if (MODEL) {
    // the served model: from the start of its download to its first painted result
    await servedModelPainted(page);
    modelMs = await page.evaluate(() => {
      const fetched = performance.getEntriesByType('resource').find((e) => e.name.includes('/models/'));
      const log = window.__attnlab.log;
      const after = log.find((r) => fetched && r.at > fetched.responseEnd);
      return fetched && after ? { downloadMs: fetched.responseEnd - fetched.startTime, toPaintedMs: after.at - fetched.startTime } : null;
    });
    // the worker's memory with the model loaded and its first result (and the head-role
    // probe) done, before any typing
    await new Promise((r) => setTimeout(r, 5000));
    if (modelMs) modelMs.loadedMemory = await workerMemory(page);
  }
  // the longest main-thread task (≥ 50 ms is what Chromium reports as a long task)
  await page.evaluate(() => {
    window.__longest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: 'longtask', buffered: false });
  });
  const first = await page.evaluate(() => window.__attnlab.log[0]);
  const out = { backend, firstPaintMs: first.at ?? NaN, firstForwardMs: first.forwardMs, modelMs, rows: [] };
  // the floor under page-side time in this browser: from a random moment to the frame after
  // the next repaint (what `painted` waits for) with no work on the page at all
  out.floor = await page.evaluate(async (n) => {
    const waits = [];
    for (let i = 0; i < n; i++) {
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
      const t0 = performance.now();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      waits.push(performance.now() - t0);
    }
    return waits;
  }, Math.max(SAMPLES, 40));
  if (VIEW) await page.locator(VIEW).scrollIntoViewIfNeeded();
  try {
    for (const t of SIZES) {
      // stay below the context (128): past it the start is dropped, positions shift and
      // every keystroke is a full forward
      const top = Math.min(t + 6, CONTEXT - 1);
      // the text's length is found by the CLI, not by the page: a software GPU's page takes
      // minutes over a long text, and the search's longer candidates would leave their
      // memory in the worker's (wasm memory only grows), which each row reports after it
      const count = async (text) => cliTokens(text);
      const base = await baseText(page, top - 12, SOURCE_TEXT, count);
      // the whole text pasted over a one-word one (the worker's cache then reuses nothing):
      // input → painted
      await page.locator('#text').fill('Zebra');
      await settled(page);
      await page.locator('#text').fill(base);
      const pasteMs = (await settled(page, PASTE_TIMEOUT_S * 1000)).latencyMs;
      const lat = [];
      const fwd = [];
      const side = [];
      const eng = [];
      const tokens = [];
      let incremental = 0;
      await page.locator('#text').fill(base);
      await settled(page);
      if (QUERY_BACK > 0) {
        // (the token strip is on the whole page only: a row before presented the view)
        if (await page.evaluate(() => document.documentElement.dataset.present)) {
          await page.keyboard.press('Escape');
          await page.waitForFunction(() => !document.documentElement.dataset.present);
        }
        await page.locator('#token-strip .tok').nth(-QUERY_BACK).click();
        await settled(page);
      }
      if (VIEW) await page.locator(VIEW).scrollIntoViewIfNeeded();
      if (PRESENT && !(await page.evaluate(() => document.documentElement.dataset.present))) {
        // F presents the view on screen (not while typing in the text box)
        await page.evaluate(() => document.activeElement?.blur());
        await page.keyboard.press('f');
        await page.waitForFunction(() => document.documentElement.dataset.present);
        await settled(page);
      }
      await page.locator('#text').press('End');
      if (VIEW && !PRESENT) await page.locator(VIEW).scrollIntoViewIfNeeded();
      let near = 0;
      await page.evaluate(() => {
        window.__longest = 0;
      });
      for (let i = 0; i < SAMPLES; i++) {
        await page.keyboard.type(TYPED[i % TYPED.length]);
        const p = await settled(page);
        lat.push(p.latencyMs);
        fwd.push(p.forwardMs);
        side.push(p.latencyMs - p.forwardMs);
        if (typeof p.engineMs === 'number') eng.push(p.engineMs);
        tokens.push(p.tokens);
        incremental += p.incremental ? 1 : 0;
        if (VIEW) {
          near += await page.evaluate((sel) => {
            const r = document.querySelector(sel)?.getBoundingClientRect();
            return r && r.bottom > -200 && r.top < innerHeight + 200 ? 1 : 0;
          }, VIEW);
        }
        bar(i + 1, SAMPLES, `${backend} T≈${t}`);
        if (p.tokens >= top) {
          // back to the base (not measured) so the row stays near T tokens
          await page.locator('#text').fill(base);
          await settled(page);
          await page.locator('#text').press('End');
          if (VIEW) await page.locator(VIEW).scrollIntoViewIfNeeded();
        }
      }
      out.rows.push({
        t,
        tokensMean: tokens.reduce((a, b) => a + b, 0) / tokens.length,
        samples: SAMPLES,
        incremental,
        latency: { p50: quantile(lat, 0.5), p95: quantile(lat, 0.95) },
        forward: { p50: quantile(fwd, 0.5), p95: quantile(fwd, 0.95) },
        page: { p50: quantile(side, 0.5), p95: quantile(side, 0.95) },
        // the CPU worker's own forward (its clock), without the transfer
        engine: eng.length ? { p50: quantile(eng, 0.5), p95: quantile(eng, 0.95) } : null,
        longestTaskMs: await page.evaluate(() => window.__longest),
        ranOn: (await page.evaluate(() => window.__attnlab.painted.backend)) ?? backend,
        workerMemory: await workerMemory(page),
        pageHeap: await page.evaluate(() => performance.memory?.usedJSHeapSize ?? null),
        pasteMs,
        near: VIEW ? near : null,
      });
    }
  } finally {
    await app.close();
  }
  return out;
}

/** Every file the first load fetched, with its gzipped size. */
async function firstLoad() {
  const app = await openApp({ webgpu: true });
  const requested = [...new Set(app.srv.requests)];
  await app.close();
  const files = requested.map((p) => {
    const file = path.join(DIST, p === '/' ? 'index.html' : decodeURIComponent(p));
    const raw = fs.readFileSync(file);
    return { path: p, bytes: raw.length, gzip: zlib.gzipSync(raw, { level: 9 }).length };
  });
  return files;
}

const fmt = (x) => x.toFixed(1);
const results = [];
for (const b of BACKENDS) results.push(await measure(b));
const load = await firstLoad();
const gzTotal = load.reduce((a, f) => a + f.gzip, 0);
const wasm = load.find((f) => f.path.endsWith('.wasm'));

const lines = [];
lines.push(`keystroke → painted${MODEL ? ` on ${MODEL}` : ''}${VIEW ? ` with ${VIEW} ${PRESENT ? 'presented' : 'in view'} (viewport height ${HEIGHT})` : ''}${QUERY_BACK ? `, the query the ${QUERY_BACK}th token from the end` : ''}, ${SAMPLES} keystrokes per row (Chromium ${process.env.CHROMIUM ?? '/usr/bin/chromium'}, headless)`);
lines.push('');
lines.push('| backend (ran on) | tokens | incremental | latency p50 / p95 (ms) | forward p50 / p95 (ms) | of which the worker\'s forward p50 / p95 (ms) | page-side p50 / p95 (ms) | longest task (ms) |');
lines.push('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  for (const row of r.rows) {
    const task = row.longestTaskMs > 0 ? fmt(row.longestTaskMs) : '< 50 (none reported)';
    lines.push(`| ${r.backend} (${row.ranOn}) | ${fmt(row.tokensMean)} | ${row.incremental}/${row.samples} | ${fmt(row.latency.p50)} / ${fmt(row.latency.p95)} | ${fmt(row.forward.p50)} / ${fmt(row.forward.p95)} | ${row.engine ? `${fmt(row.engine.p50)} / ${fmt(row.engine.p95)}` : '—'} | ${fmt(row.page.p50)} / ${fmt(row.page.p95)} | ${task} |`);
  }
}
lines.push('');
for (const r of results) {
  lines.push(`${r.backend}: the frame-wait floor (no work on the page: a random moment → the frame after the next repaint) p50 / p95 ${fmt(quantile(r.floor, 0.5))} / ${fmt(quantile(r.floor, 0.95))} ms`);
}
lines.push('');
for (const r of results) {
  lines.push(`${r.backend}: first result painted ${fmt(r.firstPaintMs)} ms after navigation (its forward ${fmt(r.firstForwardMs)} ms)`);
  if (r.modelMs) lines.push(`${r.backend}: ${MODEL}: download ${fmt(r.modelMs.downloadMs)} ms; download start → its first painted result ${fmt(r.modelMs.toPaintedMs)} ms`);
  if (r.modelMs?.loadedMemory) lines.push(`${r.backend}: the CPU worker's wasm memory with ${MODEL} loaded (its first result and the probe done): ${(r.modelMs.loadedMemory / 1e6).toFixed(1)} MB`);
  for (const row of r.rows) {
    if (row.workerMemory) lines.push(`${r.backend}: the CPU worker's wasm memory after T≈${row.t}: ${(row.workerMemory / 1e6).toFixed(1)} MB`);
    if (row.pageHeap) lines.push(`${r.backend}: the page's JS heap (usedJSHeapSize) after T≈${row.t}: ${(row.pageHeap / 1e6).toFixed(1)} MB`);
    lines.push(`${r.backend}: T≈${row.t}, the whole text pasted into an empty box → painted: ${fmt(row.pasteMs)} ms`);
    if (row.near !== null) lines.push(`${r.backend}: T≈${row.t}, ${VIEW} within 200 px of the screen when the result was painted: ${row.near} of ${row.samples} keystrokes`);
  }
}
lines.push('');
lines.push('| first load: file | bytes | gzipped |');
lines.push('|---|---|---|');
for (const f of load) lines.push(`| ${f.path} | ${f.bytes} | ${f.gzip} |`);
lines.push(`| **total** | ${load.reduce((a, f) => a + f.bytes, 0)} | **${gzTotal}** (${(gzTotal / 1e6).toFixed(2)} MB) |`);
lines.push('');
lines.push(`wasm: ${wasm?.bytes} bytes, ${wasm?.gzip} gzipped`);
const report = lines.join('\n');
console.log(report);
fs.mkdirSync(ARTIFACTS, { recursive: true });
fs.writeFileSync(path.join(ARTIFACTS, 'bench.json'), JSON.stringify({ results, load }, null, 2));
fs.writeFileSync(path.join(ARTIFACTS, 'bench.md'), report + '\n');
