// Benchmark of "load your own model": how long reading, validating and starting a large model
// takes in the page, whether the progress bar moves, how long the page's main thread is
// blocked at most (the longest gap of a 20 ms timer), and then, typing 10 characters with the
// big model, the longest main-thread task (PerformanceObserver 'longtask') and keystroke
// latency.
//   cargo run --release -p attnlab-model --example random_model -- /tmp/big-model
//   node web/e2e/bench-load.mjs /tmp/big-model [--cpu] [--paste FILE [--words N]]
// `--paste FILE`: then FILE's text pasted at once (its first N words with `--words`; past the
// model's context the page drops its start): its tokens, the time to its painted result,
// whether the result is slim (the page's heads grid says so), and six characters typed after
// it.
import fs from 'node:fs';
import path from 'node:path';

import { openApp, quantile, settled } from './common.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node web/e2e/bench-load.mjs MODEL_DIR [--cpu]');
  process.exit(2);
}
const webgpu = !process.argv.includes('--cpu');
const app = await openApp(webgpu ? { webgpu, query: '#backend=webgpu' } : { webgpu });
const { page } = app;
try {
  await page.evaluate(() => {
    window.__gap = { last: performance.now(), max: 0 };
    setInterval(() => {
      const now = performance.now();
      window.__gap.max = Math.max(window.__gap.max, now - window.__gap.last);
      window.__gap.last = now;
    }, 20);
    // the longest gap up to the moment the model is in place (before its first forward)
    new MutationObserver(() => {
      if (window.__gap.loaded === undefined && document.querySelector('#own-status[data-state]')) {
        window.__gap.loaded = Math.max(window.__gap.max, performance.now() - window.__gap.last);
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  const gen = await page.evaluate(() => window.__attnlab.painted.generation);
  const t0 = Date.now();
  await page.locator('#own-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(dir, f)));
  const progress = new Set();
  let checkingAt = null;
  for (;;) {
    const st = await page.evaluate(() => {
      const el = document.querySelector('#own-status');
      const p = document.querySelector('#own-progress');
      return { text: el?.textContent ?? '', state: el?.dataset.state ?? null, value: p ? Number(p.value) : null, max: p ? Number(p.max) : null };
    });
    if (st.value !== null) progress.add(Math.round((100 * st.value) / st.max));
    // the status line reads "읽는 중 …" while reading and "검사 중…" while validating (ko-KR)
    if (checkingAt === null && st.text.startsWith('검사')) checkingAt = Date.now();
    if (st.state) {
      if (st.state !== 'loaded') throw new Error(st.text);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const loadedAt = Date.now();
  await page.waitForFunction((g) => window.__attnlab.painted.generation > g, gen, { timeout: 600_000 });
  const shownAt = Date.now();
  const gap = await page.evaluate(() => window.__gap);
  const backend = await page.evaluate(() => window.__attnlab.painted.backend);
  // typing with the big model: the page's longest task and the latency
  await page.evaluate(() => {
    window.__longest = 0;
    window.__gap.max = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: 'longtask' });
  });
  await page.locator('#text').fill('Which do you like better');
  await settled(page, 600_000);
  await page.locator('#text').press('End');
  const typed = [];
  for (const ch of ' coffee or') {
    await page.keyboard.type(ch);
    typed.push(await settled(page, 600_000));
  }
  const typing = await page.evaluate(() => ({ longest: window.__longest, gap: window.__gap.max }));
  const why = await page.evaluate(() => (document.querySelector('#notice') ?? document.querySelector('.cpu-reason'))?.textContent ?? null);
  let pasted = null;
  const pasteAt = process.argv.indexOf('--paste');
  if (pasteAt > 0) {
    const wordsAt = process.argv.indexOf('--words');
    let text = fs.readFileSync(process.argv[pasteAt + 1], 'utf8');
    if (wordsAt > 0) text = text.split(' ').slice(0, Number(process.argv[wordsAt + 1])).join(' ');
    await page.locator('#text').fill(text);
    // (a software GPU takes twenty minutes over ≈ 1,000 tokens)
    const p = await settled(page, 1_800_000);
    const slim = await page.evaluate(() => document.querySelector('#heads-slim')?.dataset.span ?? null);
    await page.locator('#text').press('End');
    const after = [];
    for (const ch of ' and t') {
      await page.keyboard.type(ch);
      after.push(await settled(page, 600_000));
    }
    pasted = {
      tokens: p.tokens,
      latencyMs: Math.round(p.latencyMs),
      slimSpan: slim,
      typedLatencyP50Ms: Math.round(quantile(after.map((q) => q.latencyMs), 0.5)),
      typedIncremental: after.filter((q) => q.incremental).length,
      ranOn: p.backend,
    };
  }
  console.log(JSON.stringify({
    backend,
    ...(why ? { cpuBecause: why } : {}),
    readMs: (checkingAt ?? loadedAt) - t0,
    validateAndStartMs: loadedAt - (checkingAt ?? loadedAt),
    firstResultMs: shownAt - loadedAt,
    progressPercentsSeen: [...progress].sort((a, b) => a - b),
    longestGapWhileLoadingMs: Math.round(gap.loaded),
    longestGapWithFirstForwardMs: Math.round(gap.max),
    typing: {
      keystrokes: typed.length,
      tokens: typed.at(-1).tokens,
      latencyP50Ms: Math.round(quantile(typed.map((p) => p.latencyMs), 0.5)),
      forwardP50Ms: Math.round(quantile(typed.map((p) => p.forwardMs), 0.5)),
      longestTaskMs: Math.round(typing.longest),
      longestTimerGapMs: Math.round(typing.gap),
      ranOn: typed.at(-1).backend,
    },
    ...(pasted ? { pasted } : {}),
  }));
} finally {
  await app.close();
}
