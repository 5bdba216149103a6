// End-to-end tests of lesson mode, interventions with Δ, exports, the table view and loading
// a model from files — in headless Chromium, like app.test.mjs. Lesson, Δ and exports run on
// the CPU path (no WebGPU, faster); loading a model runs on WebGPU (the engine is rebuilt).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ARTIFACTS, CLI, ROOT, assertTopFiveIsCli, caughtUp, cliTrace, currentHash, failOnErrors, fmtShown, nextResult, openApp, painted, requestsSince, setText, settled, fullPageShot } from './common.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });
const LESSON = '나는 어제 산 커피를 오늘 마셨다';
const MALFORMED = path.join(ROOT, 'crates/model/tests/data/malformed');
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];

const cells = (page, sel) => page.$$eval(`${sel} td`, (tds) => tds.map((td) => td.textContent.trim()));
const num = (s) => Number(s.replace(/−/g, '-'));

/** The next-token predictions of the CLI (JSON), with extra flags. */
function cliPredict(text, extra = []) {
  const out = execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), 'predict', text, '--format', 'json', '--top', '200', ...extra], {
    encoding: 'utf8',
  });
  return JSON.parse(out).next;
}

/** Clicks a button that downloads a file; returns { name, bytes }. */
async function download(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(selector).click()]);
  const file = path.join(ARTIFACTS, dl.suggestedFilename());
  await dl.saveAs(file);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(file) };
}

/** Gives the model loader `files` (or a folder); resolves to the status it ends in. */
async function loadFiles(page, selector, files) {
  const prev = (await page.locator('#own-status').textContent().catch(() => '')) ?? '';
  await page.locator(selector).setInputFiles(files);
  await page.waitForFunction(
    (p) => {
      const el = document.querySelector('#own-status[data-state]');
      return el && el.textContent !== p;
    },
    prev,
    { timeout: 120_000 },
  );
  const el = page.locator('#own-status');
  return { state: await el.getAttribute('data-state'), text: await el.textContent() };
}

/** The CLI's JSON for a formation command (`lens`, `generate`) on the bundled model. */
function cliJson(args) {
  return JSON.parse(execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), ...args, '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

/** The page's logit lens, once it is of the result on screen: per stage its top tokens and the final prediction's probability and rank. */
async function pageLens(page) {
  const gen = (await painted(page)).generation;
  await page.locator('#lens').scrollIntoViewIfNeeded();
  await page.waitForFunction((g) => document.querySelector('#lens-table')?.dataset.generation === String(g), gen, { timeout: 60_000 });
  return page.$eval('#lens-table', (t) => ({
    position: Number(t.dataset.position),
    target: Number(t.dataset.target),
    stages: [...t.querySelectorAll('tbody tr')].map((tr) => ({
      target_prob: Number(tr.dataset.targetProb),
      target_rank: Number(tr.dataset.targetRank),
      top: [...tr.querySelectorAll('td.lens-tok button')].map((b) => ({ id: Number(b.dataset.token), prob: Number(b.dataset.prob) })),
    })),
  }));
}

/** Asserts that the page's lens of `text` equals `attnlab lens` (ids and ranks exactly, probabilities within `tol`). */
async function assertLensMatchesCli(page, text, tol) {
  const got = await pageLens(page);
  const cli = cliJson(['lens', text, '--top', '5']);
  assert.equal(got.position, cli.position);
  assert.equal(got.target, cli.target.id);
  assert.equal(got.stages.length, cli.stages.length, 'the embedding and every block');
  cli.stages.forEach((s, i) => {
    const g = got.stages[i];
    assert.deepEqual(g.top.map((x) => x.id), s.top.map((x) => x.id), `${s.stage}: the top tokens`);
    g.top.forEach((x, k) => assert.ok(Math.abs(x.prob - s.top[k].prob) <= tol, `${s.stage} #${k}: ${x.prob} vs ${s.top[k].prob}`));
    assert.equal(g.target_rank, s.target_rank, `${s.stage}: the final prediction's rank`);
    assert.ok(Math.abs(g.target_prob - s.target_prob) <= tol, `${s.stage}: ${g.target_prob} vs ${s.target_prob}`);
  });
  return got;
}

/** Fills the Generate control's fields (each followed by its change event). */
async function genSettings(page, { steps, greedy, temperature, topK, topP, seed }) {
  const set = async (sel, v) => {
    if (v === undefined) return;
    await page.locator(sel).fill(String(v));
    await page.locator(sel).dispatchEvent('change');
  };
  if (greedy !== undefined && (await page.locator('#gen-greedy').isChecked()) !== greedy) await page.locator('#gen-greedy').click();
  await set('#gen-steps', steps);
  await set('#gen-temperature', temperature);
  await set('#gen-top-k', topK);
  await set('#gen-top-p', topP);
  await set('#gen-seed', seed);
}

/** Runs the Generate control to its end; returns { state, ids, text }. */
async function generate(page) {
  await page.locator('#gen-start').click();
  await page.waitForFunction(() => !['running', 'idle'].includes(document.querySelector('#gen-status').dataset.state), null, { timeout: 240_000 });
  await settled(page);
  const el = page.locator('#gen-status');
  const ids = (await el.getAttribute('data-ids')).split(',').filter(Boolean).map(Number);
  return { state: await el.getAttribute('data-state'), ids, message: await el.textContent(), text: await page.locator('#text').inputValue() };
}

/** Asserts that a run of the Generate control equals `attnlab generate` with the same settings. */
async function assertGenerationMatchesCli(page, text, settings, cliFlags) {
  await setText(page, text);
  await genSettings(page, settings);
  const got = await generate(page);
  const cli = cliJson(['generate', text, '--steps', String(settings.steps), ...cliFlags]);
  assert.equal(got.state, 'done', got.message);
  assert.deepEqual(got.ids, cli.generated.map((g) => g.id), `the tokens of ${cliFlags.join(' ')}`);
  assert.equal(got.text, cli.full_text, 'the text box holds the generated text');
  assert.equal((await painted(page)).text, cli.full_text);
  return got;
}

const ROLES = ['previous', 'first', 'self', 'broad', 'local', 'induction', 'duplicate'];

/** The head roles table as the page shows it, once the probe ran: { 'l.h': { role: score|null, role: code|null } }. */
async function pageRoles(page, heads) {
  await page.waitForFunction(
    (n) => document.querySelectorAll('#head-roles tbody tr').length === n && !/…/.test(document.querySelector('#probe-status')?.textContent ?? '…'),
    heads,
    { timeout: 60_000 },
  );
  const rows = await page.$$eval('#head-roles tbody tr', (trs) =>
    trs.map((tr) => ({
      head: tr.dataset.rowHead,
      cells: [...tr.querySelectorAll('td')].map((td) => ({ text: td.textContent.trim(), badge: td.querySelector('.role-badge')?.dataset.role ?? null })),
    })),
  );
  return Object.fromEntries(
    rows.map(({ head, cells }) => [
      head,
      {
        scores: Object.fromEntries(ROLES.map((r, i) => [r, cells[i].text === '—' ? null : Number(cells[i].text)])),
        role: cells[ROLES.length].badge,
      },
    ]),
  );
}

/** Checks the page's head roles against `attnlab heads TEXT` on the same model (three decimals shown). */
function assertRolesMatchCli(shown, modelDir, text) {
  const cli = JSON.parse(execFileSync(CLI, ['--model', modelDir, 'heads', text, '--format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  assert.equal(Object.keys(shown).length, cli.heads.length);
  for (const h of cli.heads) {
    const got = shown[`${h.layer}.${h.head}`];
    for (const r of ROLES) {
      const want = h.scores[r];
      if (want === null) assert.equal(got.scores[r], null, `${h.layer}.${h.head} ${r}`);
      else assert.ok(Math.abs(got.scores[r] - want) <= 0.0011, `${h.layer}.${h.head} ${r}: page ${got.scores[r]}, CLI ${want}`);
    }
    assert.equal(got.role, h.role, `${h.layer}.${h.head}'s role`);
  }
  return cli;
}

/** Width and height from a PNG's IHDR, after checking the signature. */
function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
}

describe('lesson mode, interventions and exports (CPU path)', () => {
  let app;
  before(async () => {
    app = await openApp({ webgpu: false });
  });
  after(async () => {
    await app?.close();
  });
  failOnErrors(() => app);

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

  test('ablating a head changes the prediction; Δ is against the unmodified model', async (t) => {
    const { page } = app;
    // an open question (after the lesson sentence the model is 99.8 % sure of a line break)
    const text = 'Which do you like better, coffee or';
    await setText(page, text);
    const before = cliPredict(text);
    const ablated = cliPredict(text, ['--ablate', '0.0,0.1']);
    const toggle = async (on) => {
      for (const h of ['0.0', '0.1']) {
        await page.locator(`[data-head="${h}"]`).click();
        if ((await page.locator('#ablate').isChecked()) === on) continue;
        const gen = (await painted(page)).generation;
        await page.locator('#ablate').setChecked(on);
        await nextResult(page, gen);
      }
    };
    t.after(() => toggle(false));
    await toggle(true);
    const items = await page.$$eval('#next-last li', (lis) =>
      lis.map((li) => ({ id: Number(li.dataset.token), p: Number(li.dataset.prob), base: Number(li.querySelector('.delta')?.dataset.base), delta: li.querySelector('.delta')?.textContent })),
    );
    assert.equal(items[0].id, ablated[0].id, 'top token = the CLI with --ablate 0.0,0.1');
    for (const it of items) {
      const cliBase = before.find((c) => c.id === it.id);
      const cliNow = ablated.find((c) => c.id === it.id);
      assert.ok(cliBase && cliNow, `token ${it.id} in the CLI's top 200`);
      assert.ok(Math.abs(it.p - cliNow.prob) < 1e-4, `p(${it.id})`);
      assert.ok(Math.abs(it.base - cliBase.prob) < 1e-4, `unmodified p(${it.id})`);
      assert.equal(num(it.delta.replace('±', '')).toFixed(2), (Math.abs((it.p - it.base) * 100) < 0.005 ? 0 : (it.p - it.base) * 100).toFixed(2));
    }
    assert.ok(items.some((it) => Math.abs(it.p - it.base) > 0.01), 'ablating two heads moves some probability');
    assert.match(await page.locator('#next-last li .delta.up').first().textContent(), /^\+\d+\.\d\d$/);
  });

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

  test('a pinned query row stays highlighted across keystrokes until the text before it changes; Esc unpins', async () => {
    const { page } = app;
    await setText(page, LESSON);
    const map = page.locator('#head-map');
    // a click on row i's label (the geometry changes with the token count)
    const clickLabel = async (i) => {
      const m = Number(await map.getAttribute('data-margin'));
      const c = Number(await map.getAttribute('data-cell-size'));
      await map.click({ position: { x: m / 2, y: m + (i + 0.5) * c } });
    };
    const strip0 = await page.$$eval('#token-strip .tok .piece', (els) => els.map((e) => e.textContent));
    const coffee = strip0.findIndex((p) => p.includes('커피'));
    assert.ok(coffee > 0, `a token with 커피 in ${strip0}`);
    await clickLabel(coffee);
    const pinned = () => page.locator('#token-strip .tok.pinned').textContent().catch(() => null);
    await page.waitForSelector('#token-strip .tok.pinned');
    assert.match(await pinned(), /커피/);
    assert.match(await currentHash(page), new RegExp(`&q=${coffee}&`));
    // highlighted in the steps' number tables too, on the same row
    const rows = await page.$$eval('.steps-card table.numbers', (ts) => ts.map((t) => [...t.querySelectorAll('tbody tr')].findIndex((r) => r.classList.contains('pinned'))));
    assert.ok(rows.length >= 4 && rows.every((r) => r === coffee), `pinned rows ${rows}`);
    // the drill-down follows the pin: the pinned row at its largest weight
    assert.match(await page.locator('#drill-h').textContent(), /^[^·]*커피/);
    // typing after it keeps the pin on the same token
    await setText(page, `${LESSON} 정말`);
    assert.match(await pinned(), /커피/);
    // a second click on the same label unpins
    await clickLabel(coffee);
    await page.waitForFunction(() => !document.querySelector('#token-strip .tok.pinned'));
    // pin again; a change before the token lets it go
    await clickLabel(coffee);
    await page.waitForSelector('#token-strip .tok.pinned');
    await setText(page, '나는 그제 산 커피를 오늘 마셨다');
    assert.equal(await page.locator('#token-strip .tok.pinned').count(), 0);
    // Esc in the text box lets go too
    await clickLabel(1);
    await page.waitForSelector('#token-strip .tok.pinned');
    await page.locator('#text').press('Escape');
    await page.waitForFunction(() => !document.querySelector('#token-strip .tok.pinned'));
    // keyboard: Enter on a focused cell pins its row, Esc unpins
    await map.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const row = Number((await page.locator('#cell-readout').getAttribute('data-cell')).split(',')[0]);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#token-strip .tok.pinned');
    const strip = await page.$$eval('#token-strip .tok .piece', (els) => els.map((e) => e.textContent));
    assert.ok((await pinned()).startsWith(strip[row]), `row ${row} pinned`);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('#token-strip .tok.pinned'));
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
  test('a next token clicked is appended to the text and run, as if typed', async () => {
    const { page } = app;
    await setText(page, '나는 어제 산 커피를 오늘');
    const first = page.locator('#next-last li').first();
    const id = Number(await first.getAttribute('data-token'));
    const cli = cliPredict('나는 어제 산 커피를 오늘');
    assert.equal(id, cli[0].id);
    await first.locator('button.append').click();
    const p = await settled(page);
    const piece = cli[0].display.replace(/␣/g, ' ').replace(/⏎/g, '\n');
    assert.equal(await page.locator('#text').inputValue(), `나는 어제 산 커피를 오늘${piece}`);
    assert.equal(p.text, `나는 어제 산 커피를 오늘${piece}`);
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

describe('loading a model from files (WebGPU)', () => {
  let app;
  before(async () => {
    // WebGPU forced: Auto would pick the CPU on this machine's software GPU
    app = await openApp({ webgpu: true, query: '#backend=webgpu' });
  });
  after(async () => {
    await app?.close();
  });
  failOnErrors(() => app);

  test('the logit lens and a seeded generation on WebGPU equal the CLI', async () => {
    const { page } = app;
    await setText(page, LESSON);
    assert.equal((await painted(page)).backend, 'webgpu');
    await assertLensMatchesCli(page, LESSON, 2e-4);
    for (const method of ['value', 'rollout']) {
      await page.locator(`#flow-${method}`).check();
      await page.waitForSelector(`#flow-strip[data-method=${method}]`);
      await caughtUp(page);
      const cli = cliJson(['flow', LESSON, '--method', method]);
      const shown = await page.$$eval('#flow-strip tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.textContent.replace(/−/g, '-')))));
      cli.layers.forEach((row, l) => row.forEach((x, j) => assert.ok(Math.abs(shown[l][j] - x) < 2e-4, `WebGPU ${method} L${l} key ${j}: ${shown[l][j]} vs ${x}`)));
    }
    await page.locator('#flow-raw').check();
    await assertGenerationMatchesCli(page, LESSON, { steps: 8, greedy: false, temperature: 0.8, topK: 40, topP: '', seed: 7 },
      ['--temperature', '0.8', '--top-k', '40', '--seed', '7']);
    assert.equal((await painted(page)).backend, 'webgpu', 'every step ran on the GPU');
  });

  test('an invalid model is refused with the reason and the current model stays; a valid one replaces it', async () => {
    const { page, srv } = app;
    await setText(page, LESSON);
    const sizes = await page.locator('#model-sizes').textContent();
    const next = await page.locator('#next-last').textContent();
    const requests = srv.requests.length;

    // missing files
    const missing = await loadFiles(page, '#own-files', [path.join(MALFORMED, 'valid', 'config.json')]);
    assert.equal(missing.state, 'failed');
    assert.match(missing.text, /model\.safetensors, tokenizer\.json/);

    // a wrong shape (the tensor, expected and found), NaN weights, broken tokenizers
    for (const bad of ['wrong-shape', 'nan-weight', 'tokenizer-truncated', 'tokenizer-larger-than-vocab']) {
      const got = await loadFiles(page, '#own-files', FILES.map((f) => path.join(MALFORMED, bad, f)));
      assert.equal(got.state, 'failed', bad);
      for (const word of fs.readFileSync(path.join(MALFORMED, bad, 'expect.txt'), 'utf8').trim().split('\n')) {
        assert.ok(got.text.includes(word), `${bad}: «${got.text}» names ${word}`);
      }
    }
    // dropped on the drop zone (a drag and drop of three files)
    const prev = await page.locator('#own-status').textContent();
    const payload = FILES.map((f) => ({ name: f, b64: fs.readFileSync(path.join(MALFORMED, 'wrong-dtype', f)).toString('base64') }));
    await page.evaluate((files) => {
      const dt = new DataTransfer();
      for (const { name, b64 } of files) {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], name));
      }
      const zone = document.querySelector('#drop-zone');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, payload);
    await page.waitForFunction((p) => {
      const el = document.querySelector('#own-status[data-state]');
      return el && el.textContent !== p;
    }, prev);
    const dropped = await page.locator('#own-status').textContent();
    for (const word of fs.readFileSync(path.join(MALFORMED, 'wrong-dtype', 'expect.txt'), 'utf8').trim().split('\n')) {
      assert.ok(dropped.includes(word), `dropped wrong-dtype: «${dropped}» names ${word}`);
    }

    // the previous model is still the one running
    assert.equal(await page.locator('#model-sizes').textContent(), sizes);
    assert.equal(await page.locator('#next-last').textContent(), next);
    await setText(page, `${LESSON} 다`);
    await setText(page, LESSON);
    assert.equal(await page.locator('#next-last').textContent(), next);

    // a valid model (a folder picked): replaces the bundled one and runs on the GPU
    const gen = (await painted(page)).generation;
    const loaded = await loadFiles(page, '#own-folder', path.join(MALFORMED, 'valid'));
    assert.equal(loaded.state, 'loaded', loaded.text);
    await nextResult(page, gen);
    const cfg = JSON.parse(fs.readFileSync(path.join(MALFORMED, 'valid', 'config.json'), 'utf8'));
    const newSizes = await page.locator('#model-sizes').textContent();
    assert.notEqual(newSizes, sizes);
    assert.ok(newSizes.includes(`d_model${cfg.n_embd}`), newSizes);
    assert.equal(await page.locator('.heads-row:not(.head-labels)').count(), cfg.n_layer);
    assert.equal((await painted(page)).backend, 'webgpu');
    // its probe ran again: the roles table (WebGPU) equals the CLI's on the same files
    await setText(page, 'abcabc');
    assertRolesMatchCli(await pageRoles(page, cfg.n_layer * cfg.n_head), path.join(MALFORMED, 'valid'), 'abcabc');
    // the new model's numbers equal the CLI's on the same files
    const p = await setText(page, 'abc');
    const out = JSON.parse(execFileSync(CLI, ['--model', path.join(MALFORMED, 'valid'), 'trace', 'abc', '--layer', '0', '--head', '0', '--format', 'json'], { encoding: 'utf8' }));
    assert.equal(p.tokens, out.tokens.length);
    await assertTopFiveIsCli(page, '#next-last', out.next, 'the dropped model');
    assert.deepEqual(requestsSince(srv, requests), [], 'the files never left the browser');
    await fullPageShot(page, path.join(ARTIFACTS, 'own-model.png'));
  });
});
