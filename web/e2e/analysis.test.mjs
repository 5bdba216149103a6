// End-to-end tests of the analysis views against the CLI: head roles, comparing two texts,
// attention flow, the logit lens and seeded generation — on the CPU path.

import fs from 'node:fs';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';

import { ARTIFACTS, assertTopFiveIsCli, CLI, cliTrace, currentHash, fullPageShot, painted, ROOT, setText, suiteApp } from './common.mjs';
import { LESSON, cliJson, assertLensMatchesCli, genSettings, generate, assertGenerationMatchesCli, pageRoles, assertRolesMatchCli } from './features.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

describe('analysis views (CPU path)', () => {
  const app = suiteApp({ webgpu: false });

  test('head roles: the table and the grid badges agree with attnlab heads; sorting and the filter work', async () => {
    const { page } = app;
    await setText(page, LESSON);
    const shown = await pageRoles(page, 16);
    const cli = assertRolesMatchCli(shown, path.join(ROOT, 'assets', 'model'), LESSON);
    // the grid's badge is each head's role
    for (const h of cli.heads) {
      const badge = await page.locator(`.head-cell[data-head="${h.layer}.${h.head}"] .role-badge`).getAttribute('data-role').catch(() => null);
      assert.equal(badge, h.role, `badge of ${h.layer}.${h.head}`);
    }
    // sorting by previous-token puts the highest first
    await page.locator('#head-roles thead button.sort').nth(1).click();
    const firstRow = await page.locator('#head-roles tbody tr').first().getAttribute('data-row-head');
    const best = cli.heads.reduce((a, b) => (b.scores.previous > a.scores.previous ? b : a));
    assert.equal(firstRow, `${best.layer}.${best.head}`);
    assert.equal(await page.locator('#head-roles thead th[aria-sort=descending]').count(), 1);
    // clicking a row's button selects that head
    await page.locator('#head-roles tbody tr').first().locator('button').click();
    assert.equal(await page.locator(`.head-cell[data-head="${firstRow}"]`).getAttribute('aria-pressed'), 'true');
    // the filter dims every head without the role
    await page.selectOption('#role-filter', 'broad');
    const broad = cli.heads.filter((h) => h.scores.broad >= cli.thresholds.broad).length;
    assert.equal(await page.locator('.head-cell:not(.dim)').count(), broad);
    await fullPageShot(page, path.join(ARTIFACTS, 'head-roles.png'));
    await page.selectOption('#role-filter', '');
    assert.equal(await page.locator('.head-cell.dim').count(), 0);
    await page.locator('#head-roles thead button.sort').first().click();
  });

  test('comparing two texts: side by side, the difference and row changes equal the CLI, both texts in the URL', async () => {
    const { page } = app;
    const A = '나는 커피를 마셨다';
    await setText(page, A);
    await page.locator('.head-cell[data-head="0.0"]').click();
    await page.locator('#compare-toggle').check();
    assert.equal(await page.locator('#text-b').inputValue(), '나는 차를 마셨다');
    await page.waitForSelector('#compare-rows');
    const B = '나는 차를 마셨다';
    assert.ok((await currentHash(page)).includes(`&b=${encodeURIComponent(B).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())}`));
    // per-row change = ½·Σ|B − A| of the selected head's weights, as the CLI computes them
    const wa = cliTrace(A, 0, 0).heads[0].weights;
    const cb = cliTrace(B, 0, 0);
    const wb = cb.heads[0].weights;
    assert.equal(wa.length, wb.length);
    const tv = await page.$$eval('#compare-rows tbody td.tv', (tds) => tds.map((td) => Number(td.textContent)));
    assert.equal(tv.length, wa.length);
    wa.forEach((row, i) => {
      const want = row.reduce((s, x, k) => s + Math.abs(wb[i][k] - x), 0) / 2;
      assert.ok(Math.abs(tv[i] - want) < 6e-4, `row ${i}: ${tv[i]} vs ${want}`);
    });
    assert.equal(tv[0], 0, 'the first row sees only the first token in both');
    assert.equal(await page.locator('#compare-diff').count(), 1);
    // B's next-token list is the CLI's
    await assertTopFiveIsCli(page, '#compare-next-b', cb.next, 'B');
    // B typed: a different token count has no difference map, and says so
    await page.locator('#text-b').fill('나는 오늘 차를 마셨다');
    await page.waitForSelector('#compare-status');
    const nb = cliTrace('나는 오늘 차를 마셨다', 0, 0).tokens.length;
    assert.match(await page.locator('#compare-status').textContent(), new RegExp(`A ${wa.length}개, B ${nb}개`));
    assert.equal(await page.locator('#compare-diff').count(), 0);
    await page.locator('#compare').screenshot({ path: path.join(ARTIFACTS, 'compare.png') });
    // the link restores both texts
    const hash = await currentHash(page);
    assert.ok(hash.includes('&b='), hash);
    await page.locator('#compare-toggle').uncheck();
    assert.equal(await page.locator('#compare').count(), 0);
    assert.ok(!(await currentHash(page)).includes('&b='));
    // switched on again, B is what it was
    await page.locator('#compare-toggle').check();
    assert.equal(await page.locator('#text-b').inputValue(), '나는 오늘 차를 마셨다');
    await page.locator('#compare-toggle').uncheck();
  });

  test('attention flow: the strip equals attnlab flow for each method; the map switches; rollout is called an approximation', async () => {
    const { page } = app;
    await setText(page, LESSON);
    for (const method of ['raw', 'value', 'rollout']) {
      await page.locator(`#flow-${method}`).check();
      await page.waitForSelector(`#flow-strip[data-method=${method}]`);
      const q = (await currentHash(page)).match(/&q=(\d+)/)?.[1];
      const cli = JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), 'flow', LESSON, '--method', method, ...(q ? ['--query', q] : [])], { encoding: 'utf8' }));
      const shown = await page.$$eval('#flow-strip tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent.replace(/−/g, '-')))));
      assert.equal(shown.length, cli.layers.length, method);
      cli.layers.forEach((row, l) => row.forEach((x, j) => assert.ok(Math.abs(shown[l][j] - x) < 6e-5, `${method} L${l} key ${j}: ${shown[l][j]} vs ${x}`)));
      assert.equal(await page.locator('#flow-approx').count(), method === 'rollout' ? 1 : 0);
      assert.equal(await page.locator('#flow-note').count(), method === 'raw' ? 0 : 1);
      if (method !== 'raw') assert.match(await currentHash(page), new RegExp(`&flow=${method}`));
    }
    await page.locator('.flow-card').screenshot({ path: path.join(ARTIFACTS, 'flow-rollout.png') });
    await page.locator('#flow-raw').check();
    assert.ok(!(await currentHash(page)).includes('flow='));
  });

  test('the logit lens and seeded generations equal the CLI; bad settings and the context are said (CPU)', async () => {
    const { page } = app;
    await setText(page, LESSON);
    await assertLensMatchesCli(page, LESSON, 1e-5);
    assert.equal(await page.locator('#lens-how').getAttribute('data-normalised'), 'block-outputs', 'the bundled model is post-LN');
    // clicking a token follows it through every stage
    const btn = page.locator('#lens-table tbody tr[data-stage="1"] td.lens-tok button').first();
    const followed = Number(await btn.getAttribute('data-token'));
    await btn.click();
    const follow = await page.$$eval('#lens-table td.follow', (tds) => tds.map((td) => Number(td.dataset.prob)));
    const lens = cliJson(['lens', LESSON, '--top', '6000']);
    assert.equal(follow.length, lens.stages.length);
    follow.forEach((p, i) => {
      const want = lens.stages[i].top.find((x) => x.id === followed).prob;
      assert.ok(Math.abs(p - want) <= 1e-5, `stage ${i}: ${p} vs ${want}`);
    });
    await page.locator('#lens').screenshot({ path: path.join(ARTIFACTS, 'lens-ko.png') });
    // the lesson's section 9 leads to the lens
    await page.locator('#lesson-toggle').click();
    for (let i = 0; i < 8; i++) await page.locator('#lesson-next').click();
    await page.locator('#lesson-lens-link').click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'lens-h');
    await page.locator('#lesson-close').click();

    // sampled (T 0.8, top-k 40, seed 7), nucleus (top-p 0.9), greedy: each the CLI's tokens
    await assertGenerationMatchesCli(page, LESSON, { steps: 8, greedy: false, temperature: 0.8, topK: 40, topP: '', seed: 7 },
      ['--temperature', '0.8', '--top-k', '40', '--seed', '7']);
    assert.match(await currentHash(page), /&gen=8&greedy=0&out_t=0\.8&top_k=40&top_p=&seed=7$/, 'the settings are in the link');
    // Generate again: it continues from exactly the ids on screen (not a re-tokenized text)
    const first = await page.locator('#gen-status').getAttribute('data-ids');
    const had = (await painted(page)).tokens;
    await genSettings(page, { steps: 4 });
    const again = await generate(page);
    assert.equal(again.state, 'done', again.message);
    assert.equal(again.ids.length, 4);
    assert.equal((await painted(page)).tokens, had + 4);
    assert.ok(again.text.startsWith(cliJson(['generate', LESSON, '--steps', '8', '--temperature', '0.8', '--top-k', '40', '--seed', '7']).full_text), first);
    await genSettings(page, { steps: 8 });
    await page.locator('#generate').screenshot({ path: path.join(ARTIFACTS, 'generate-ko.png') });
    await assertGenerationMatchesCli(page, LESSON, { steps: 5, temperature: 1.3, topK: '', topP: 0.9, seed: 2026 },
      ['--temperature', '1.3', '--top-p', '0.9', '--seed', '2026']);
    await assertGenerationMatchesCli(page, '나는', { steps: 6, greedy: true }, ['--greedy']);

    // bad settings: named, Generate disabled, the text and its result kept
    await setText(page, LESSON);
    const before = await painted(page);
    await genSettings(page, { greedy: false, temperature: 'NaN', topK: '0', steps: 99 });
    const errors = await page.locator('#gen-errors li').allTextContents();
    assert.equal(errors.length, 3, errors.join(' | '));
    assert.ok(await page.locator('#gen-start').isDisabled());
    for (const t of ['-1', 'Infinity', '0']) {
      await genSettings(page, { temperature: t, topK: '', steps: 4 });
      assert.deepEqual(await page.locator('#gen-errors li').allTextContents(), ['출력 온도는 0보다 큰 유한한 수여야 합니다.'], t);
    }
    assert.equal((await painted(page)).generation, before.generation, 'nothing ran');
    assert.equal(await page.locator('#text').inputValue(), LESSON);

    // stoppable: a 64-token run stopped at once ends early
    await genSettings(page, { temperature: 1, steps: 64, seed: 1 });
    await page.locator('#gen-start').click();
    await page.locator('#gen-stop').click();
    await page.waitForFunction(() => document.querySelector('#gen-status').dataset.state === 'stopped');
    const stoppedAt = (await page.locator('#gen-status').getAttribute('data-ids')).split(',').length;
    assert.ok(stoppedAt < 64, `stopped after ${stoppedAt}`);

    // the context: a text a few tokens short of it takes what fits and says why; a full one takes none
    const words = Array(30).fill(LESSON).join(' ').split(' ');
    let n = 60;
    let p = await setText(page, words.slice(0, n).join(' '));
    while (p.tokens < 121) p = await setText(page, words.slice(0, ++n).join(' '));
    assert.ok(p.tokens <= 127, `${p.tokens} tokens`);
    const room = 128 - p.tokens;
    await genSettings(page, { steps: 8, greedy: true });
    const cut = await generate(page);
    assert.equal(cut.state, 'context', cut.message);
    assert.equal(cut.ids.length, room, cut.message);
    assert.match(cut.message, /128/);
    await page.locator('#gen-start').click();
    await page.waitForFunction(() => document.querySelector('#gen-status').dataset.state === 'context');
    assert.match(await page.locator('#gen-status').textContent(), /이미 문맥 길이\(128 토큰\)/);
  });
});
