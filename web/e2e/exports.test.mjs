// End-to-end tests of what leaves the page: every export, and the table view of a head's
// weights — on the CPU path.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';

import { CLI, cliTrace, ROOT, setText, suiteApp } from './common.mjs';
import { LESSON, download, pngSize } from './features.mjs';

describe('exports and the table view (CPU path)', () => {
  const app = suiteApp({ webgpu: false });

  test('each export is a valid file with the numbers on screen', async () => {
    const { page } = app;
    await setText(page, LESSON);
    await page.locator('[data-head="1.2"]').click();
    const cli = cliTrace(LESSON, 1, 2);
    const t = cli.tokens.length;

    const png = await download(page, '#export-png');
    assert.equal(png.name, 'attnlab-L1H2-weights.png');
    const { w, h } = pngSize(png.bytes);
    assert.ok(w >= 300 && w === h, `square heatmap ${w}×${h}`);

    const svg = await download(page, '#export-svg');
    const text = svg.bytes.toString('utf8');
    assert.equal((text.match(/<rect x=/g) ?? []).length, t * t);
    const ok = await page.evaluate((s) => {
      const doc = new DOMParser().parseFromString(s, 'image/svg+xml');
      return doc.querySelector('parsererror') === null && doc.documentElement.nodeName === 'svg';
    }, text);
    assert.ok(ok, 'the SVG parses as XML');
    const w00 = Number(/data-q="1" data-k="0" data-weight="([^"]+)"/.exec(text)[1]);
    assert.ok(Math.abs(w00 - cli.heads[0].weights[1][0]) < 1e-4);

    const csv = (await download(page, '#export-csv')).bytes.toString('utf8').trim().split('\n');
    assert.equal(csv[0], 'layer,head,query,key,query_token,key_token,score,scaled,masked,weight');
    assert.equal(csv.length, 1 + t * t);
    const last = csv.slice(1 + (t - 1) * t).map((l) => Number(l.split(',').at(-1)));
    assert.ok(Math.abs(last.reduce((a, b) => a + b, 0) - 1) < 1e-5, 'the last row of weights sums to 1');

    const json = JSON.parse((await download(page, '#export-json')).bytes.toString('utf8'));
    assert.deepEqual([json.heads[0].layer, json.heads[0].head], [1, 2]);
    json.heads[0].weights.flat().forEach((x, i) => assert.ok(Math.abs(x - cli.heads[0].weights.flat()[i]) < 1e-5, `weight ${i}`));
    assert.deepEqual(json.tokens.map((x) => x.id), cli.tokens.map((x) => x.id));

    const grid = await download(page, '#export-grid');
    const dims = cli.dims;
    const k = Math.ceil(64 / t);
    assert.deepEqual(pngSize(grid.bytes), { w: dims.n_head * t * k + (dims.n_head + 1) * 4, h: dims.n_layer * t * k + (dims.n_layer + 1) * 4 });

    const trace = JSON.parse((await download(page, '#export-trace')).bytes.toString('utf8'));
    assert.equal(trace.trace.probs.length, t * dims.vocab);
    assert.equal(trace.trace.layers.length, dims.n_layer);
    // whole: the views get a lite trace from the CPU worker, the export every field, exact
    const cliFull = JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets/model'), 'trace', await page.locator('#text').inputValue(), '--format', 'json', '--full'], { encoding: 'utf8', maxBuffer: 256 << 20 }));
    for (const [name, want] of Object.entries(cliFull.trace.layers[dims.n_layer - 1])) {
      const got = trace.trace.layers[dims.n_layer - 1][name];
      assert.equal(got.length, want.length, `layer ${dims.n_layer - 1} ${name}`);
      got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) <= 1e-4 * Math.max(1, Math.abs(want[i])), `${name}[${i}]: ${x} vs ${want[i]}`));
    }
    assert.match(await page.locator('#export-status').textContent(), /attnlab-trace\.json/);
  });

  test('the table view gives the selected head\'s weights as a table', async () => {
    const { page } = app;
    await setText(page, LESSON);
    await page.locator('[data-head="0.1"]').click();
    await page.locator('#table-view').check();
    const cli = cliTrace(LESSON, 0, 1).heads[0].weights;
    const t = cli.length;
    assert.equal(await page.locator('#head-table tbody tr').count(), t);
    assert.equal(await page.locator('#head-table thead th[scope=col]').count(), t + 1);
    const row = await page.$$eval('#head-table tbody tr:last-child td', (tds) => tds.map((td) => Number(td.textContent)));
    row.forEach((x, j) => assert.ok(Math.abs(x - cli[t - 1][j]) < 1e-4));
    assert.equal(await page.locator('#head-table tbody tr:first-child td.masked').count(), t - 1);
    await page.locator('#table-view').uncheck();
  });
});
