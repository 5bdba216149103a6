// Benchmark of opening the page: navigation → first painted result, on a first visit (a new
// browser profile: nothing kept) and on the next visit (a reload: the offline copy, where the
// build has one, answers instead of the server), CPU path. Each sample is a new browser.
//   node web/e2e/bench-visit.mjs [--samples 8]      (ATTNLAB_DIST=… for another build)
import fs from 'node:fs';
import path from 'node:path';

import { launch } from './browser.mjs';
import { DIST, quantile } from './common.mjs';
import { serve } from './server.mjs';

const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : d;
};
const samples = Number(arg('--samples', '8'));
const withCopy = fs.existsSync(path.join(DIST, 'sw.js'));
const srv = await serve(DIST);
const first = [];
const again = [];
let offline = null;
try {
  for (let i = 0; i < samples; i++) {
    const { context, close } = await launch({ webgpu: false });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      let t = Date.now();
      await page.goto(srv.url);
      await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 180_000 });
      first.push(Date.now() - t);
      // the copy is complete before the next visit (a build without one has nothing to wait for)
      if (withCopy) {
        await page.waitForFunction(() => document.documentElement.dataset.offline === 'ready', null, { timeout: 60_000 });
      }
      offline = await page.evaluate(() => document.documentElement.dataset.offline ?? 'no offline copy');
      t = Date.now();
      await page.reload();
      await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 180_000 });
      again.push(Date.now() - t);
    } finally {
      await close();
    }
  }
} finally {
  await srv.close();
}
const f = (xs) => `p50 ${quantile(xs, 0.5)} ms, p95 ${quantile(xs, 0.95)} ms`;
console.log(`${DIST} (${samples} browsers, CPU path; offline copy: ${offline})`);
console.log(`  first visit → first result painted: ${f(first)}`);
console.log(`  next visit (reload) → painted:      ${f(again)}`);
