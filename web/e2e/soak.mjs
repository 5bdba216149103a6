// Soak: many edits of a long text on the page, with SmolLM2 on the CPU worker — typing at the
// end, deleting, pasting a passage over the end, picking another head — and, every so often,
// the worker's wasm memory, the page's JS heap and the longest main-thread task since the last
// sample. Every edit waits for its result to be painted (the text shown is the text typed).
// Writes target/e2e/soak.json, soak.md (the summary) and soak-memory.png (the curves).
//
//   node web/e2e/soak.mjs [--edits 2000] [--tokens 500] [--every 50]

import fs from 'node:fs';
import path from 'node:path';

import { ARTIFACTS, ROOT, baseText, openApp, servedModelPainted, settled } from './common.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const EDITS = Number(arg('edits', '2000'));
const TOKENS = Number(arg('tokens', '500'));
const EVERY = Number(arg('every', '50'));
const SOURCE = fs.readFileSync(path.join(ROOT, 'tools/long/long-en.txt'), 'utf8');

/** The CPU worker's wasm memory (bytes). */
async function workerMemory(page) {
  for (const w of page.workers()) {
    const bytes = await w.evaluate(() => self.__attnlabMemory?.buffer.byteLength ?? null).catch(() => null);
    if (bytes) return bytes;
  }
  return null;
}

const app = await openApp({ webgpu: false, query: '#lang=en&backend=cpu&model=smollm2' });
const { page } = app;
const samples = [];
let painted = 0;
try {
  await servedModelPainted(page);
  const base = await baseText(page, TOKENS, SOURCE);
  // a passage pasted over the end: the text's next sentences
  const more = SOURCE.slice(base.length, base.length + 200);
  await page.locator('#text').fill(base);
  await settled(page, 600_000);
  await page.locator('#text').press('End');
  await page.evaluate(() => {
    window.__longest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: 'longtask', buffered: false });
  });
  const heads = ['18.6', '17.4', '2.1', '16.0', '11.1', '0.0'];
  const started = Date.now();
  for (let i = 0; i < EDITS; i++) {
    const kind = i % 10;
    if (kind < 6) {
      await page.keyboard.type('abcdefghij'[i % 10]);
    } else if (kind < 8) {
      await page.keyboard.press('Backspace');
    } else if (kind === 8) {
      // a paste over the end (or back to the base when the text has grown)
      const now = await page.locator('#text').inputValue();
      await page.locator('#text').fill(now.length > base.length + 150 ? base : now + more.slice(0, 40));
      await page.locator('#text').press('End');
    } else {
      await page.locator(`.head-cell[data-head="${heads[i % heads.length]}"]`).click();
      await page.locator('#text').focus();
      await page.locator('#text').press('End');
    }
    const p = await settled(page, 120_000);
    if (kind === 9) {
      await page.waitForSelector('#heads-computing', { state: 'detached', timeout: 120_000 });
    }
    painted += p.text === (await page.locator('#text').inputValue()) ? 1 : 0;
    if ((i + 1) % EVERY === 0) {
      samples.push({
        edits: i + 1,
        seconds: (Date.now() - started) / 1000,
        tokens: p.tokens,
        workerMB: (await workerMemory(page)) / 1e6,
        pageMB: (await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0)) / 1e6,
        longestTaskMs: await page.evaluate(() => {
          const x = window.__longest;
          window.__longest = 0;
          return x;
        }),
      });
      process.stderr.write(`\r  ${i + 1}/${EDITS} edits, ${samples.at(-1).tokens} tokens, worker ${samples.at(-1).workerMB.toFixed(0)} MB, page ${samples.at(-1).pageMB.toFixed(0)} MB   `);
    }
  }
  process.stderr.write('\n');
} finally {
  await app.close();
}

// warm-up: the first quarter; growth after it, of each memory
const warm = samples[Math.floor(samples.length / 4)];
const last = samples.at(-1);
const growth = (k) => (100 * (last[k] - warm[k])) / warm[k];
const longest = Math.max(...samples.map((s) => s.longestTaskMs));
const lines = [
  `soak: ${EDITS} edits of a ≈${TOKENS}-token text on SmolLM2, CPU worker (6 of 10 a character typed at the end, 2 a Backspace, 1 a paste over the end, 1 another head picked); every result painted: ${painted}/${EDITS}`,
  '',
  `- the worker's wasm memory: ${warm.workerMB.toFixed(1)} MB after ${warm.edits} edits → ${last.workerMB.toFixed(1)} MB after ${last.edits} (${growth('workerMB').toFixed(1)} %)`,
  `- the page's JS heap: ${warm.pageMB.toFixed(1)} MB → ${last.pageMB.toFixed(1)} MB (${growth('pageMB').toFixed(1)} %)`,
  `- the longest main-thread task: ${longest > 0 ? `${longest.toFixed(0)} ms` : 'none ≥ 50 ms reported'}`,
  `- ${last.seconds.toFixed(0)} s in all`,
];
const report = lines.join('\n');
console.log(report);
fs.mkdirSync(ARTIFACTS, { recursive: true });
fs.writeFileSync(path.join(ARTIFACTS, 'soak.json'), JSON.stringify({ samples, painted }, null, 2));
fs.writeFileSync(path.join(ARTIFACTS, 'soak.md'), report + '\n');

// the curves, drawn as SVG and photographed in the browser
const W = 900;
const H = 360;
const pad = 50;
const maxMB = Math.max(...samples.map((s) => Math.max(s.workerMB, s.pageMB))) * 1.1;
const x = (e) => pad + ((W - 2 * pad) * e) / EDITS;
const y = (mb) => H - pad - ((H - 2 * pad) * mb) / maxMB;
const line = (k, colour) => `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${samples.map((s) => `${x(s.edits).toFixed(1)},${y(s[k]).toFixed(1)}`).join(' ')}"/>`;
const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${pad - 6}" y="${y(maxMB * f) + 4}" text-anchor="end" font-size="12">${(maxMB * f).toFixed(0)}</text>`).join('');
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${pad}" y="24" font-size="15">Soak: memory over ${EDITS} edits (SmolLM2, ≈${TOKENS} tokens, CPU worker)</text>
<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#888"/><line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="#888"/>
${ticks}<text x="${W / 2}" y="${H - 12}" text-anchor="middle" font-size="12">edits (0 … ${EDITS})</text>
<text x="14" y="${H / 2}" font-size="12" transform="rotate(-90 14 ${H / 2})" text-anchor="middle">MB</text>
${line('workerMB', '#6a3d9a')}${line('pageMB', '#e66101')}
<text x="${W - pad}" y="${y(last.workerMB) - 8}" text-anchor="end" font-size="12" fill="#6a3d9a">worker wasm memory</text>
<text x="${W - pad}" y="${y(last.pageMB) - 8}" text-anchor="end" font-size="12" fill="#e66101">page JS heap</text>
</svg>`;
fs.writeFileSync(path.join(ARTIFACTS, 'soak-memory.svg'), svg);
const shot = await openApp({ webgpu: false, query: '#lang=en' });
await shot.page.setContent(svg);
await shot.page.locator('svg').screenshot({ path: path.join(ARTIFACTS, 'soak-memory.png') });
await shot.close();
