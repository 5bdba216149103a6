// Benchmark: keystroke → painted latency of the app in headless Chromium, on WebGPU
// (SwiftShader here) and on the CPU path, at about 16, 64 and 128 tokens; plus what the
// first load transfers (gzipped) and the time to the first painted result.
//
//   node web/e2e/bench.mjs [--samples 100] [--backends webgpu,cpu] [--sizes 16,64,128]
//
// Each sample is one character typed at the end of a text of T − 6 … T + 6 tokens (capped
// below the context; measured
// from the input event to the frame after the repaint); past T + 6 the text is reset to its
// base (not measured). Typing at the end is the incremental path.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { ARTIFACTS, DIST, openApp, quantile, settled } from './common.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SAMPLES = Number(arg('samples', '100'));
const BACKENDS = arg('backends', 'webgpu,cpu').split(',');
const SIZES = arg('sizes', '16,64,128').split(',').map(Number);

// Korean and English, like the lesson; long enough for 128 tokens
const SOURCE =
  '나는 어제 산 커피를 오늘 마셨다. Which do you like better, coffee or tea? ' +
  '그는 아침마다 도서관에 가서 책을 읽었다. The model looks at every earlier word at once. ' +
  '우리는 주말에 공원에서 친구들과 점심을 먹었다. Attention weights in each row sum to one. ' +
  '동생은 학교에서 돌아오자마자 숙제를 끝냈다. She bought a new notebook and wrote down her plans. ' +
  '비가 와서 우리는 집에서 영화를 보기로 했다. ';

// the bundled model's context
const CONTEXT = 128;

// what the benchmark types, one character per keystroke
const TYPED = [...' 커피를 마셨다 and tea'];

const bar = (done, total, label) => {
  const w = 30;
  const n = Math.round((done / total) * w);
  process.stderr.write(`\r  ${label} [${'#'.repeat(n)}${'.'.repeat(w - n)}] ${done}/${total}`);
  if (done === total) process.stderr.write('\n');
};

/** The longest prefix of SOURCE (cut at a space) that the page runs as ≤ t tokens. */
async function baseText(page, t) {
  const cuts = [...SOURCE.matchAll(/ /g)].map((m) => m.index);
  let lo = 0;
  let hi = cuts.length - 1;
  let best = SOURCE.slice(0, cuts[0]);
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const text = SOURCE.slice(0, cuts[mid]);
    await page.locator('#text').fill(text);
    const p = await settled(page);
    if (p.tokens <= t) {
      best = text;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

async function measure(backend) {
  const app = await openApp({ webgpu: backend === 'webgpu' });
  const { page } = app;
  const first = await page.evaluate(() => window.__attnlab.log[0]);
  const out = { backend, firstPaintMs: first.at ?? NaN, firstForwardMs: first.forwardMs, rows: [] };
  try {
    for (const t of SIZES) {
      // stay below the context (128): past it the start is dropped, positions shift and
      // every keystroke is a full forward
      const top = Math.min(t + 6, CONTEXT - 1);
      const base = await baseText(page, top - 12);
      const lat = [];
      const fwd = [];
      const tokens = [];
      let incremental = 0;
      await page.locator('#text').fill(base);
      await settled(page);
      await page.locator('#text').press('End');
      for (let i = 0; i < SAMPLES; i++) {
        await page.keyboard.type(TYPED[i % TYPED.length]);
        const p = await settled(page);
        lat.push(p.latencyMs);
        fwd.push(p.forwardMs);
        tokens.push(p.tokens);
        incremental += p.incremental ? 1 : 0;
        bar(i + 1, SAMPLES, `${backend} T≈${t}`);
        if (p.tokens >= top) {
          // back to the base (not measured) so the row stays near T tokens
          await page.locator('#text').fill(base);
          await settled(page);
          await page.locator('#text').press('End');
        }
      }
      out.rows.push({
        t,
        tokensMean: tokens.reduce((a, b) => a + b, 0) / tokens.length,
        samples: SAMPLES,
        incremental,
        latency: { p50: quantile(lat, 0.5), p95: quantile(lat, 0.95) },
        forward: { p50: quantile(fwd, 0.5), p95: quantile(fwd, 0.95) },
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
lines.push(`keystroke → painted, ${SAMPLES} keystrokes per row (Chromium ${process.env.CHROMIUM ?? '/usr/bin/chromium'}, headless)`);
lines.push('');
lines.push('| backend | tokens | incremental | latency p50 (ms) | latency p95 (ms) | forward+readback p50 (ms) | forward+readback p95 (ms) | p95 latency ÷ p95 forward |');
lines.push('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  for (const row of r.rows) {
    lines.push(`| ${r.backend} | ${fmt(row.tokensMean)} | ${row.incremental}/${row.samples} | ${fmt(row.latency.p50)} | ${fmt(row.latency.p95)} | ${fmt(row.forward.p50)} | ${fmt(row.forward.p95)} | ${(row.latency.p95 / row.forward.p95).toFixed(2)} |`);
  }
}
lines.push('');
for (const r of results) {
  lines.push(`${r.backend}: first result painted ${fmt(r.firstPaintMs)} ms after navigation (its forward ${fmt(r.firstForwardMs)} ms)`);
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
