// End-to-end test of lesson mode: its nine sections on the live model, in Korean and English,
// in headless Chromium like app.test.mjs, on the CPU path (no WebGPU, faster).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { ARTIFACTS, assertTopFiveIsCli, CLI, currentHash, fmtShown, nextResult, painted, ROOT, setText, settled, suiteApp } from './common.mjs';
import { LESSON, num, cliPredict } from './features.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

describe('lesson mode (CPU path)', () => {
  const app = suiteApp({ webgpu: false });

  test('the lesson walks through its nine sections on the live model, in Korean and English', async () => {
    const { page } = app;
    // the page opened on the clearest head for its text: the lowest broad score among non-sinks
    const roles = JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), 'heads', LESSON, '--format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    const clearest = roles.heads
      .filter((h) => h.scores.first < roles.thresholds.first)
      .reduce((a, b) => (b.scores.broad < a.scores.broad ? b : a));
    assert.equal(await page.locator('.head-cell[aria-pressed=true]').getAttribute('data-head'), `${clearest.layer}.${clearest.head}`);
    await setText(page, LESSON);
    await page.locator('#lesson-toggle').click();
    await page.locator('#lesson').waitFor();
    assert.match(await page.locator('#lesson-h').textContent(), /수업 1\/9/);
    assert.equal(await page.locator('main').getAttribute('data-focus'), 'heads-card');
    // section 1: the RNN picture animates, unless the user asked for reduced motion
    const anim = () => page.$eval('.seq-arrow', (el) => getComputedStyle(el).animationName);
    assert.equal(await anim(), 'seq-step');
    await page.emulateMedia({ reducedMotion: 'reduce' });
    assert.equal(await anim(), 'none');
    await page.emulateMedia({ reducedMotion: 'no-preference' });
    await page.screenshot({ path: path.join(ARTIFACTS, 'lesson-ko-1.png') });

    // section 2: q, k, v of the picked token equal the CLI's
    await page.locator('#lesson-next').click();
    assert.match(await page.locator('#qkv-shapes').textContent(), /W_Q, W_K, W_V/);
    const full = JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets/model'), 'trace', LESSON, '--format', 'json', '--full'], { encoding: 'utf8', maxBuffer: 256 << 20 }));
    const { t, d_k: dk } = full.trace.dims;
    // the selected head (the page opened on the clearest one)
    const [sl, sh] = (await page.locator('.head-cell[aria-pressed=true]').getAttribute('data-head')).split('.').map(Number);
    const q = full.trace.layers[sl].q; // heads × T × d_k
    const at = (d) => q[sh * t * dk + (t - 1) * dk + d];
    const shown = (await page.$$eval('#qkv-table tr[data-row=q] td', (tds) => tds.map((td) => td.textContent))).map(num);
    shown.forEach((x, d) => assert.ok(Math.abs(x - at(d)) < 2e-4, `q[${d}]: ${x} vs ${at(d)}`));

    // section 4: the lesson's example, exact, then edited; the variance demo
    await page.locator('.lesson-dots .dot').nth(3).click();
    assert.equal(await page.locator('#lesson').getAttribute('data-section'), '4');
    assert.equal(await page.locator('main').getAttribute('data-focus'), 'compare-card');
    const row = (r) => page.$$eval(`#scaling-table tr[data-row=${r}] td`, (tds) => tds.map((td) => td.textContent));
    // the lesson's scores (2, 4, 20, 3) with d_k = 64: softmax computed here, in f64, and
    // written to the page's precision; raw, one score takes ≈ all; scaled, it spreads out
    const softmax = (xs) => {
      const m = Math.max(...xs);
      const e = xs.map((x) => Math.exp(x - m));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / sum);
    };
    const scores = [2, 4, 20, 3];
    assert.deepEqual(await row('raw'), scores.map(fmtShown));
    assert.deepEqual(await row('scaled'), ['0.2500', '0.5000', '2.5000', '0.3750']);
    assert.deepEqual(await row('raw-softmax'), softmax(scores).map(fmtShown));
    assert.deepEqual(await row('scaled-softmax'), softmax(scores.map((x) => x / 8)).map(fmtShown));
    assert.deepEqual(await row('scaled-softmax'), ['0.0775', '0.0995', '0.7352', '0.0878']);
    await page.screenshot({ path: path.join(ARTIFACTS, 'lesson-ko-4.png') });
    await page.locator('#lesson-scores').fill('1, 3');
    await page.locator('#lesson-dk').fill('4');
    assert.deepEqual(await row('scaled'), ['0.5000', '1.5000']);
    const variance = await page.$$eval('#variance-table tbody tr', (trs) =>
      trs.map((tr) => ({ dk: Number(tr.dataset.dk), v: Number(tr.querySelector('.var').textContent), s: Number(tr.querySelector('.var-scaled').textContent) })),
    );
    for (const { dk: d, v, s } of variance) {
      assert.ok(Math.abs(v / d - 1) < 0.15, `Var(q·k) ≈ d_k = ${d}: ${v}`);
      assert.ok(Math.abs(s - 1) < 0.15, `scaled variance ≈ 1 at d_k = ${d}: ${s}`);
    }

    // section 5: the true softmax of (1.2, 0.3, 2.1, −0.4), and the live row sums to 1
    await page.locator('#lesson-next').click();
    assert.deepEqual(await page.$$eval('#softmax-table tr[data-row=rounded] td', (tds) => tds.map((td) => td.textContent)), ['0.25', '0.10', '0.60', '0.05']);
    assert.match(await page.locator('#live-row-sum').textContent(), /= 1\.0000$/);
    assert.match(await currentHash(page), /&lesson=5/);
    // the highlighted panel is outlined
    const outline = await page.$eval('.steps-card', (el) => getComputedStyle(el).outlineStyle);
    assert.equal(outline, 'solid');

    // section 6: one click puts the lesson's sentence in; the mix of "마셨다" from the model
    await setText(page, 'coffee');
    await page.locator('#lesson-next').click();
    await page.locator('#lesson-preset').click();
    assert.equal(await page.locator('#text').inputValue(), LESSON);
    await settled(page);
    const mix = await page.locator('#lesson-mix').textContent();
    assert.match(mix, /마셨다/);
    // the section picks the head where 마셨다's largest weight is highest, and names it
    const all = JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), 'trace', LESSON, '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
    const best = all.heads
      .map((hd) => ({ hd, w: Math.max(...hd.weights.at(-1)) }))
      .reduce((a, b) => (b.w > a.w ? b : a));
    assert.ok(mix.includes(best.w.toFixed(2)), `the largest weight ${best.w.toFixed(2)} in «${mix}»`);
    const pieces = await page.$$eval('#token-strip .tok .piece', (els) => els.map((e) => e.textContent));
    const lastPiece = pieces.at(-1).replace(/^␣/, '');
    assert.ok((await page.locator('#lesson-head-name').textContent()).startsWith(`층 ${best.hd.layer} · 헤드 ${best.hd.head}: '${lastPiece}'에서 가장 뚜렷한 헤드`));
    // the lesson's pattern is reported either way, with real numbers, counted word by word:
    // a word is its tokens up to the next ␣, and its weight is the sum of theirs
    const qi = pieces.length - 1;
    const words = [];
    pieces.forEach((p, j) => (j === 0 || p.startsWith('␣') ? words.push([j]) : words.at(-1).push(j)));
    const coffee = words.findIndex((w) => w.map((j) => pieces[j]).join('').replace(/^␣/, '') === '커피를');
    assert.ok(coffee >= 0 && words[coffee].at(-1) < qi, `커피 in ${pieces}`);
    const onWord = (hd, w) => w.reduce((a, j) => a + hd.weights[qi][j], 0);
    const lookAtCoffee = all.heads.filter((hd) => {
      const sums = words.map((w) => onWord(hd, w));
      return sums.indexOf(Math.max(...sums)) === coffee;
    });
    const strongest = (hds) => hds.reduce((a, b) => (onWord(b, words[coffee]) > onWord(a, words[coffee]) ? b : a));
    // the word's weight as the page writes it: each token's weight, then their sum
    const breakdown = (hd) => {
      const w = words[coffee];
      const sum = onWord(hd, w).toFixed(2);
      return w.length < 2 ? sum : `${w.map((j) => `${pieces[j]} ${hd.weights[qi][j].toFixed(2)}`).join(' + ')} = ${sum}`;
    };
    const pattern = await page.locator('#lesson-pattern').textContent();
    if (lookAtCoffee.length > 0) {
      const top = strongest(lookAtCoffee);
      assert.ok(pattern.includes(`헤드가 ${lookAtCoffee.length}개`), pattern);
      assert.ok(pattern.includes(`층 ${top.layer} · 헤드 ${top.head}, `), pattern);
      assert.ok(pattern.includes(breakdown(top)), `${breakdown(top)} in ${pattern}`);
    } else {
      const top = strongest(all.heads);
      assert.match(pattern, /어떤 헤드도/);
      assert.ok(pattern.includes(`층 ${top.layer} · 헤드 ${top.head}의 `), pattern);
      assert.ok(pattern.includes(breakdown(top)), `${breakdown(top)} in ${pattern}`);
    }
    // one click shows the head the pattern names: with some other head on screen (picked
    // here, so the case does not depend on which head the section opened on), the button is
    // there; clicked, that head is shown and the button goes
    const named = strongest(lookAtCoffee.length > 0 ? lookAtCoffee : all.heads);
    const away = all.heads.find((hd) => hd !== named && hd !== best.hd);
    await page.selectOption('#lesson-head', String(away.layer * all.dims.n_head + away.head));
    assert.match(await page.locator('#lesson-head-name').textContent(), new RegExp(`^층 ${away.layer} · 헤드 ${away.head} \\(직접 고른 헤드\\)`));
    await page.locator('#lesson-pattern-show').click();
    assert.match(await page.locator('#lesson-head-name').textContent(), new RegExp(`^층 ${named.layer} · 헤드 ${named.head}[ :]`));
    assert.ok((await page.locator('#lesson-mix').textContent()).includes(Math.max(...named.weights.at(-1)).toFixed(2)));
    assert.equal(await page.locator('#lesson-pattern-show').count(), 0, 'no button for the head on screen');
    // the picker shows any other head
    const other = all.heads.find((hd) => hd !== best.hd);
    await page.selectOption('#lesson-head', String(other.layer * all.dims.n_head + other.head));
    assert.match(await page.locator('#lesson-head-name').textContent(), new RegExp(`층 ${other.layer} · 헤드 ${other.head} \\(직접 고른 헤드\\)`));
    const otherTop = Math.max(...other.weights.at(-1));
    assert.ok((await page.locator('#lesson-mix').textContent()).includes(otherTop.toFixed(2)));

    // section 7: switching the mask off changes the prediction, with Δ against the unmodified model
    await page.locator('#lesson-next').click();
    assert.equal(await page.locator('#mask-grid td.hidden').count() > 0, true);
    let gen = (await painted(page)).generation;
    await page.locator('#lesson-mask').uncheck();
    await nextResult(page, gen);
    assert.equal(await page.locator('#mask-grid td.hidden').count(), 0);
    await page.locator('#delta-help').waitFor();
    const noMask = cliPredict(LESSON, ['--no-mask']);
    await assertTopFiveIsCli(page, '#next-last', noMask, 'with --no-mask');
    gen = (await painted(page)).generation;
    await page.locator('#lesson-mask').check();
    await nextResult(page, gen);
    assert.equal(await page.locator('#delta-help').count(), 0, 'no Δ without an intervention');

    // section 8: the lesson's English question, one line per head of every layer, strongest first
    await page.locator('#lesson-next').click();
    await page.locator('#lesson-preset').click();
    await settled(page);
    const picks = await page.$$eval('#head-picks li', (ls) => ls.map((l) => Number(l.textContent.match(/ (\d\.\d\d)/)[1])));
    assert.equal(picks.length, full.trace.dims.n_head * full.trace.dims.n_layer);
    assert.ok(picks.every((w, i) => i === 0 || picks[i - 1] >= w), `sorted: ${picks}`);
    assert.equal(await page.locator('#head-picks li.clearest').count(), 1);

    // section 9: the block follows the loaded model; then English
    await page.locator('#lesson-next').click();
    assert.equal(await page.locator('main').getAttribute('data-focus'), 'model-card');
    assert.match(await page.locator('#block-kind').textContent(), full.trace.dims.ln_placement === 'Post' || full.trace.dims.ln_placement === 'post' ? /post-LN/ : /pre-LN/);
    assert.ok(await page.locator('#lesson-next').isDisabled());
    await page.locator('button.lang').click();
    await page.locator('.lesson-dots .dot').nth(3).click();
    assert.match(await page.locator('#lesson-h').textContent(), /Lesson 4\/9 · Why divide by √d_k/);
    await page.locator('#lesson-scores').fill('2, 4, 20, 3');
    await page.locator('#lesson-dk').fill('64');
    await setText(page, LESSON);
    await page.screenshot({ path: path.join(ARTIFACTS, 'lesson-en-4.png') });
    await page.locator('.lesson-dots .dot').nth(0).click();
    await page.screenshot({ path: path.join(ARTIFACTS, 'lesson-en-1.png') });

    // axe-core with the lesson open
    await page.evaluate(fs.readFileSync(path.join(ROOT, 'web/node_modules/axe-core/axe.min.js'), 'utf8'));
    const violations = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, first: v.nodes[0]?.target.join(' ') }));
    });
    assert.deepEqual(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], JSON.stringify(violations));
    await page.locator('#lesson-close').click();
    assert.equal(await page.locator('#lesson').count(), 0);
    await page.locator('button.lang').click();
  });
});
