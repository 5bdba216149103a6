// End-to-end tests of the live loop: the backend switch (Auto / WebGPU / CPU, kept in the URL;
// Auto's choice on this machine's software GPU and its reason in the badge), the CPU worker
// restarted after a crash with the same numbers, a hover that redraws a highlight, not the
// heatmaps, and heatmaps drawn row by row as a fresh page draws them. One browser with WebGPU
// (SwiftShader).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { allowErrors, ARTIFACTS, assertTopFiveIsCli, cliTrace, currentHash, focusCell, nextResult, painted, parseShown, setText, settled, SOURCE, suiteApp } from './common.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

const LESSON = '나는 어제 산 커피를 오늘 마셨다';

const draws = (page) => page.evaluate(() => ({ ...(window.__attnlab.draws ?? {}) }));
/** A canvas's pixels, as a SHA-256 digest (hex). */
const pixels = (page, sel) =>
  page.evaluate(async (sel) => {
    const c = document.querySelector(sel);
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const hash = await crypto.subtle.digest('SHA-256', data);
    return `${c.width}x${c.height}:${[...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
  }, sel);
// every canvas of the steps and the softmax comparison, the same way
const matrices = (page) =>
  page.evaluate(async () => {
    const out = [];
    for (const c of document.querySelectorAll('.steps-card canvas.matrix, .compare-card canvas.matrix')) {
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const hash = await crypto.subtle.digest('SHA-256', data);
      out.push(`${c.width}x${c.height}:${[...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, '0')).join('')}`);
    }
    return out;
  });
const nextTokens = (page) =>
  page.$$eval('#next-last li', (ls) => ls.map((l) => `${l.dataset.token}:${l.textContent}`));

describe('the live loop (a browser with a software WebGPU adapter)', () => {
  // no backend in the URL: Auto
  const app = suiteApp({ webgpu: true });

  test('Auto measures both backends on the software GPU, keeps the CPU and says why', async () => {
    const { page } = app;
    assert.equal(await page.locator('#backend-choice').inputValue(), 'auto');
    // the first results run on both; then the badge names the choice and the two timings
    for (const t of ['나는', '나는 어제', '나는 어제 산', LESSON]) await setText(page, t);
    await page.waitForFunction(() => /ms/.test(document.querySelector('#backend').textContent));
    const badge = await page.locator('#backend').textContent();
    assert.match(badge, /^CPU · wasm — 이 기기에선 소프트웨어 GPU보다 빠름: \d+ ms 대 \d+ ms$/, badge);
    const [cpu, gpu] = badge.match(/\d+ ms/g).map((s) => Number(s.split(' ')[0]));
    assert.ok(cpu < gpu, `the CPU (${cpu} ms) beat the software GPU (${gpu} ms)`);
    const p = await setText(page, `${LESSON} 다`);
    assert.equal(p.backend, 'cpu');
    assert.doesNotMatch(page.url(), /backend=/, 'Auto is the default: not written in the URL');
    await page.locator('header.top').screenshot({ path: path.join(ARTIFACTS, 'badge-auto.png') });
  });

  test('the switch forces WebGPU or the CPU, and the URL keeps the choice', async () => {
    const { page, context } = app;
    await setText(page, LESSON);
    const cpuNext = await nextTokens(page);
    let gen = (await painted(page)).generation;
    await page.locator('#backend-choice').selectOption('webgpu');
    await nextResult(page, gen);
    assert.equal((await painted(page)).backend, 'webgpu', 'the same text, now on WebGPU');
    assert.match(await page.locator('#backend').textContent(), /^WebGPU · /);
    assert.match(page.url(), /&backend=webgpu$/);
    assert.deepEqual(await nextTokens(page), cpuNext, 'the same next tokens on both backends');
    // the URL reopens on WebGPU
    const other = await context.newPage();
    await other.goto(page.url());
    await other.waitForFunction(() => window.__attnlab?.painted);
    assert.equal(await other.locator('#backend-choice').inputValue(), 'webgpu');
    assert.equal(await other.evaluate(() => window.__attnlab.painted.backend), 'webgpu');
    await other.close();
    // and the CPU, chosen
    gen = (await painted(page)).generation;
    await page.locator('#backend-choice').selectOption('cpu');
    await nextResult(page, gen);
    assert.equal((await painted(page)).backend, 'cpu');
    assert.match(page.url(), /&backend=cpu$/);
    assert.equal(await page.locator('#backend').getAttribute('title'), 'CPU를 골랐습니다 (WebGPU는 위의 선택에서 바꿀 수 있습니다)');
  });

  test('a CPU worker that crashes is restarted and gives the same numbers', async () => {
    const { page } = app;
    await page.locator('#backend-choice').selectOption('cpu');
    await setText(page, '나는 어제 산 커피를');
    const before = await nextTokens(page);
    const starts = await page.evaluate(() => window.__attnlab.workerStarts());
    // on purpose: the worker's panic, which it writes to the console (dom::log_panics)
    allowErrors(app, /^console\.error: attnlab panicked: .*the page asked the CPU worker to crash \(test hook\)$/s);
    await page.evaluate(() => window.__attnlab.crashWorker());
    // the next request finds the worker gone, starts a new one and runs again
    await setText(page, '나는 어제 산 커피를 오늘');
    assert.equal(await page.evaluate(() => window.__attnlab.workerStarts()), starts + 1);
    await page.locator('#worker-notice').waitFor();
    assert.match(await page.locator('#worker-notice').textContent(), /CPU 작업자가 멈춰서 새로 시작/);
    const p = await setText(page, '나는 어제 산 커피를');
    assert.equal(p.backend, 'cpu');
    assert.deepEqual(await nextTokens(page), before, 'the restarted worker computes the same');
    // …and the numbers are still the CLI's
    const cli = cliTrace('나는 어제 산 커피를', 0, 0);
    await assertTopFiveIsCli(page, '#next-last', cli.next, 'after the restart');
  });

  test('hovering cells redraws the highlight only, never the heatmaps', async () => {
    const { page } = app;
    await setText(page, LESSON);
    const map = page.locator('#head-map');
    await map.scrollIntoViewIfNeeded();
    const box = await map.boundingBox();
    const margin = Number(await map.getAttribute('data-margin'));
    const cell = Number(await map.getAttribute('data-cell-size'));
    const at = (i, j) => ({ x: box.x + margin + (j + 0.5) * cell, y: box.y + margin + (i + 0.5) * cell });
    let p = at(0, 0);
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction(() => document.querySelector('#cell-readout')?.dataset.cell === '0,0');
    const start = await draws(page);
    for (const [i, j] of [[1, 0], [2, 1], [3, 3], [4, 2]]) {
      p = at(i, j);
      await page.mouse.move(p.x, p.y);
      await page.waitForFunction((c) => document.querySelector('#cell-readout')?.dataset.cell === c, `${i},${j}`);
    }
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    const end = await draws(page);
    assert.equal(end['head-map'], start['head-map'], 'the large heatmap was not redrawn');
    assert.equal(end['heads-grid'], start['heads-grid'], 'the all-heads grid was not redrawn');
    assert.ok(end.highlight >= start.highlight + 4, `the highlight moved: ${start.highlight} → ${end.highlight}`);
    // a new result redraws each canvas once
    await page.locator('#text').focus();
    await page.keyboard.press('End');
    await page.keyboard.type('!');
    const r = await settled(page);
    assert.ok(r.text.endsWith('!'));
    const after = await draws(page);
    assert.equal(after['head-map'], end['head-map'] + 1, 'one draw of the large heatmap per result');
    assert.equal(after['heads-grid'], end['heads-grid'] + 1, 'the all-heads grid (one canvas) drawn once');
    // the views off screen waited until the visible ones were painted, then caught up: each
    // of their canvases drawn once too
    assert.ok(r.stale > 0, `views off screen still to update when the result was painted (${r.stale})`);
    const matrices = await page.locator('canvas.matrix').count();
    assert.ok(matrices >= 3, `${matrices} matrix canvases`);
    assert.equal(after.matrix, end.matrix + matrices, 'each matrix canvas drawn once');
  });

  test('a keystroke that adds a token keeps the rows already on the page', async () => {
    // yew diffs a list without keys by place from its end: one token more used to rewrite every
    // row of the token strip, the weighted sum and the softmax tables (or rebuild them)
    const { page } = app;
    await setText(page, LESSON);
    const lists = ['#token-strip > li', 'table.strips tbody tr:not(.sum-row)', 'figure[data-variant="scaled"] table.row-stats tbody tr', '#query-select option'];
    const before = await page.evaluate((lists) => lists.map((sel) => {
      const els = [...document.querySelectorAll(sel)];
      els.forEach((e, i) => { e.__kept = i; });
      return els.length;
    }), lists);
    await page.locator('#text').focus();
    await page.keyboard.press('End');
    await page.keyboard.type(' 또');
    const r = await settled(page);
    assert.ok(r.text.endsWith(' 또'));
    const after = await page.evaluate((lists) => lists.map((sel) => [...document.querySelectorAll(sel)].map((e) => e.__kept ?? null)), lists);
    for (const [k, sel] of lists.entries()) {
      assert.ok(before[k] > 0 && after[k].length > before[k], `${sel}: ${before[k]} → ${after[k].length}`);
      // the same nodes first, in order, and the new ones after them
      const first = [...Array(before[k]).keys()];
      assert.deepEqual(after[k].slice(0, before[k]), first, `${sel}: every earlier row kept (${JSON.stringify(after[k])})`);
    }
  });

  test('keystrokes at the end draw the heatmaps as a page opened on the same text does', async () => {
    // the heads grid and the large heatmap keep their images and write only what a new result
    // changed (draw/cell_image.rs), and so do the steps' and the softmax comparison's
    // canvases (draw/grown.rs): after typing and deleting on a page of its own (its images
    // new, so each token typed adds cells never drawn before), their pixels must be those of a
    // page that draws the same text from nothing
    const { page, context } = app;
    // long enough for the maps to be canvases (the steps show numbers up to 8 tokens) and for
    // a keystroke's row and column to be a small part of them
    const base = SOURCE.slice(0, 100);
    await setText(page, base);
    await currentHash(page);
    const opened = async (url, text) => {
      const p = await context.newPage();
      await p.goto(url);
      await p.waitForFunction((t) => window.__attnlab?.painted?.text === t, text);
      await currentHash(p);
      return p;
    };
    const typing = await opened(page.url(), base);
    await typing.locator('#text').focus();
    await typing.keyboard.press('End');
    // typing at the end: the heads grid writes a row and a column or two of each head, not
    // every cell (n heads × t² would be a full redraw)
    const heads = await typing.locator('.head-cell').count();
    const cells = () => typing.evaluate(() => window.__attnlab.draws['heads-grid cells'] ?? 0);
    // the matrix canvases: the cells coloured, and all their cells
    const matrixCells = () =>
      typing.evaluate(() => [
        window.__attnlab.draws['matrix cells'] ?? 0,
        [...document.querySelectorAll('canvas.matrix')].reduce((n, c) => n + c.width * c.height, 0),
      ]);
    let [written, full, coloured, whole] = [0, 0, 0, 0];
    for (const ch of ' and more!') {
      const from = await cells();
      const [mFrom] = await matrixCells();
      await typing.keyboard.type(ch);
      const { tokens } = await settled(typing);
      written += (await cells()) - from;
      full += heads * tokens * tokens;
      const [mTo, all] = await matrixCells();
      coloured += mTo - mFrom;
      whole += all;
    }
    assert.ok(written > 0 && written * 4 < full, `${written} cells written of ${full}`);
    assert.ok(coloured > 0 && coloured * 3 < whole, `matrices: ${coloured} cells coloured of ${whole}`);
    // a token off, then one on (the last drawing adds a row and a column)
    await typing.keyboard.press('Backspace');
    await settled(typing);
    await typing.keyboard.type(' x');
    const r = await settled(typing);
    assert.ok(r.text.endsWith(' and more x'), JSON.stringify(r.text));
    await currentHash(typing);
    const drawn = async (p) => [await pixels(p, '.heads-canvas'), await pixels(p, '#head-map'), ...(await matrices(p))];
    const typed = await drawn(typing);
    // (the four steps' maps, the head's output and each softmax variant: canvases here)
    assert.ok(typed.length >= 2 + 6, `${typed.length - 2} matrix canvases`);
    const fresh = await opened(typing.url(), r.text);
    assert.deepEqual(await drawn(fresh), typed);
    await Promise.all([typing.close(), fresh.close()]);
  });

  test('the text box is a form of its own, and Enter in it stays on the page', async () => {
    // Chromium's autofill checks the layout of every control that shares the changed control's
    // form (or, outside any form, every other control on the page) on each keystroke: in a form
    // of its own that is the box alone (web/e2e/trace-keystroke.mjs: ≈ 6 → 1 ms at 120 tokens)
    const { page } = app;
    await setText(page, LESSON);
    const own = await page.evaluate(() => {
      const f = document.querySelector('#text').form;
      return f ? [...f.elements].map((e) => e.id) : null;
    });
    assert.deepEqual(own, ['text']);
    // Enter types a new line; a submit (requestSubmit) neither reloads nor leaves the page
    const url = page.url();
    await page.evaluate(() => { window.__stays = 1; });
    await page.locator('#text').focus();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('또');
    const r = await settled(page);
    assert.ok(r.text.endsWith('\n또'), JSON.stringify(r.text));
    await page.evaluate(() => document.querySelector('#text').form.requestSubmit());
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__stays), 1, 'a submit reloaded the page');
    assert.equal(page.url().split('#')[0], url.split('#')[0]);
  });

  test('a long map zooms and pans: + and −, Ctrl+wheel, drag, the minimap; the focus stays on screen', async () => {
    const { page } = app;
    const text = SOURCE.slice(0, 200);
    const r = await setText(page, text);
    const t = r.tokens;
    assert.ok(t >= 60, `${t} tokens`);
    await page.locator('.head-cell[data-head="2.1"]').click();
    await page.waitForFunction(() => /2.*1/.test(document.querySelector('#head-h')?.textContent ?? ''));
    const cli = cliTrace(text, 2, 1).heads[0];
    assert.equal(cli.weights.length, t);
    const map = page.locator('#head-map');
    const win = async () => (await map.getAttribute('data-window')).split(',').map(Number);
    assert.deepEqual(await win(), [0, 0, t], 'the whole map to begin with');
    assert.equal(await page.locator('#head-minimap').count(), 0);
    // + three times about the focused cell: it stays under the same place, the labels come
    await focusCell(page, 40, 20);
    for (let k = 0; k < 3; k++) await page.keyboard.press('+');
    await page.waitForFunction(() => document.querySelector('#head-map').dataset.window.split(',')[2] < 30);
    let [r0, c0, span] = await win();
    assert.ok(r0 <= 40 && 40 < r0 + span && c0 <= 20 && 20 < c0 + span, `the focus is on screen: ${[r0, c0, span]}`);
    assert.equal(Number(await map.getAttribute('data-margin')), 84, 'zoomed in, the tokens are labelled');
    assert.equal(await page.locator('#zoom-where').textContent(), `${t}×${t} 중 쿼리 ${r0}–${r0 + span - 1}, 키 ${c0}–${c0 + span - 1}`);
    await page.waitForSelector('#head-minimap');
    // hovering a zoomed cell reads that cell of the map, the CLI's numbers
    await map.scrollIntoViewIfNeeded();
    const box = await map.boundingBox();
    const at = async (i, j) => {
      const [r0, c0] = await win();
      const [m, c] = [Number(await map.getAttribute('data-margin')), Number(await map.getAttribute('data-cell-size'))];
      return { x: box.x + m + (j - c0 + 0.5) * c, y: box.y + m + (i - r0 + 0.5) * c };
    };
    const [hi, hj] = [r0 + span - 2, c0 + 1];
    let p = await at(hi, hj);
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction((c) => document.querySelector('#cell-readout')?.dataset.cell === c, `${hi},${hj}`);
    const weight = parseShown(await page.locator('#cell-readout [data-field=weight]').textContent());
    assert.ok(Math.abs(weight - cli.weights[hi][hj]) <= 1e-6 + 1e-3 * cli.weights[hi][hj], `[${hi},${hj}]: page ${weight}, CLI ${cli.weights[hi][hj]}`);
    // dragging up and left shows later rows and keys
    await page.mouse.down();
    await page.mouse.move(p.x - 60, p.y - 90, { steps: 6 });
    await page.mouse.up();
    const dragged = await win();
    assert.ok(dragged[0] > r0 && dragged[1] > c0 && dragged[2] === span, `drag: ${[r0, c0, span]} → ${dragged}`);
    // the keyboard's focus leaving the window takes the window with it
    await map.focus();
    await page.keyboard.press('Control+Home');
    await page.waitForFunction(() => document.querySelector('#head-map').dataset.window.startsWith('0,0,'));
    // Ctrl+wheel zooms out about the pointer, the wheel alone moves the zoomed map
    p = await at(4, 4);
    await page.mouse.move(p.x, p.y);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, 100);
    await page.keyboard.up('Control');
    await page.waitForFunction((s) => Number(document.querySelector('#head-map').dataset.window.split(',')[2]) > s, span);
    [r0, c0, span] = await win();
    assert.ok(span < t, `still zoomed: ${span}`);
    await page.mouse.wheel(0, 400);
    await page.waitForFunction((r) => Number(document.querySelector('#head-map').dataset.window.split(',')[0]) > r, r0);
    // the minimap: a click at its bottom right centres the map there
    const mini = await page.locator('#head-minimap').boundingBox();
    await page.mouse.click(mini.x + mini.width - 2, mini.y + mini.height - 2);
    await page.waitForFunction((w) => document.querySelector('#head-map').dataset.window === w, `${t - span},${t - span},${span}`);
    // 0: the whole map again, and the minimap goes
    await map.focus();
    await page.keyboard.press('0');
    await page.waitForFunction((w) => document.querySelector('#head-map').dataset.window === w, `0,0,${t}`);
    assert.equal(await page.locator('#head-minimap').count(), 0);
    assert.equal(await page.locator('#zoom-out').isDisabled(), true);
  });
});
