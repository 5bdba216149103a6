// Benchmark: where a WebGPU forward of the app spends its time in this browser (SwiftShader
// here), kernel by kernel — a full forward of T tokens and the incremental one (the last
// token typed after the others), each dispatch submitted and waited for on its own, then the
// readback (copy + map) and the Trace's assembly. Calls the page's `window.__attnlab.profileGpu`
// (crates/app/src/test_hooks.rs) on the loaded model with the ids (i·37 + 11) mod V.
//
//   node web/e2e/bench-profile.mjs [--sizes 16,64] [--repeats 3]
//
// Prints one Markdown table per size and run (best of --repeats, by total) and writes it to
// target/e2e/bench-profile.md.
import fs from 'node:fs';
import path from 'node:path';

import { ARTIFACTS, openApp, settled } from './common.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SIZES = arg('sizes', '16,64').split(',').map(Number);
const REPEATS = Number(arg('repeats', '3'));

const app = await openApp({ webgpu: true, query: '#backend=webgpu' });
const out = [];
try {
  const { page } = app;
  // the bundled model's vocabulary is 6,000 tokens
  const vocab = 6000;
  const ua = await page.evaluate(() => navigator.userAgent);
  let adapter = null;
  for (const t of SIZES) {
    const ids = Array.from({ length: t }, (_, i) => (i * 37 + 11) % vocab);
    const best = {};
    for (let r = 0; r < REPEATS + 1; r++) {
      // the page's own forwards (the first result, the head-role probe) hold the engine
      // while they run: wait for it to settle, and again if the engine was busy
      let runs = null;
      for (let tries = 0; !runs; tries++) {
        await settled(page);
        try {
          runs = JSON.parse(await page.evaluate((ids) => window.__attnlab.profileGpu(ids), ids));
        } catch (e) {
          if (tries > 20 || !/busy/.test(e.message)) throw e;
          await page.waitForTimeout(500);
        }
      }
      adapter = runs[0].adapter;
      if (r === 0) continue; // warm-up
      for (const run of runs) {
        if (!best[run.what] || run.total_ms < best[run.what].total_ms) best[run.what] = run;
      }
      process.stderr.write(`\r  T = ${t}: ${r}/${REPEATS}`);
    }
    process.stderr.write('\n');
    for (const run of Object.values(best)) {
      out.push('', `T = ${t}, ${run.what} (incremental: ${run.incremental}): ${run.total_ms.toFixed(1)} ms in all`, '');
      out.push('| step | dispatches | ms | share |', '|---|---:|---:|---:|');
      const rows = [...run.kernels];
      rows.push([`readback (${((run.floats * 4) / 1e6).toFixed(2)} MB)`, 1, run.readback_ms]);
      rows.push(['trace assembly (wasm)', 1, run.assemble_ms]);
      rows.sort((a, b) => b[2] - a[2]);
      for (const [name, n, ms] of rows) {
        out.push(`| ${name} | ${n} | ${ms.toFixed(1)} | ${((100 * ms) / run.total_ms).toFixed(0)} % |`);
      }
    }
  }
  out.unshift(`WebGPU adapter: ${adapter}; ${ua}`);
} finally {
  await app.close();
}
const text = out.join('\n') + '\n';
process.stdout.write(text);
fs.mkdirSync(ARTIFACTS, { recursive: true });
fs.writeFileSync(path.join(ARTIFACTS, 'bench-profile.md'), text);
