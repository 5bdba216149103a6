// What the feature tests (lesson, interventions, exports, analysis, model files) share: the
// lesson's sentence, the CLI's answers to compare with, and the page-side readers of lens,
// generation, roles and downloads.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ARTIFACTS, CLI, ROOT, painted, setText, settled } from './common.mjs';

export const LESSON = '나는 어제 산 커피를 오늘 마셨다';
export const MALFORMED = path.join(ROOT, 'crates/model/tests/data/malformed');
export const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];

export const cells = (page, sel) => page.$$eval(`${sel} td`, (tds) => tds.map((td) => td.textContent.trim()));
export const num = (s) => Number(s.replace(/−/g, '-'));

/** The next-token predictions of the CLI (JSON), with extra flags. */
export function cliPredict(text, extra = []) {
  const out = execFileSync(CLI, ['--model', path.join(ROOT, 'assets', 'model'), 'predict', text, '--format', 'json', '--top', '200', ...extra], {
    encoding: 'utf8',
  });
  return JSON.parse(out).next;
}

/** Clicks a button that downloads a file; returns { name, bytes }. */
export async function download(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(selector).click()]);
  const file = path.join(ARTIFACTS, dl.suggestedFilename());
  await dl.saveAs(file);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(file) };
}

/** Gives the model loader `files` (or a folder); resolves to the status it ends in. */
export async function loadFiles(page, selector, files) {
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
export function cliJson(args, model = path.join(ROOT, 'assets', 'model')) {
  return JSON.parse(execFileSync(CLI, ['--model', model, ...args, '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
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

/** Asserts that the page's lens of `text` equals `attnlab lens` (ids and ranks exactly, probabilities within `tol`), of the bundled model unless `model` names another. */
export async function assertLensMatchesCli(page, text, tol, model = undefined) {
  const got = await pageLens(page);
  const cli = cliJson(['lens', text, '--top', '5'], model);
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
export async function genSettings(page, { steps, greedy, temperature, topK, topP, seed }) {
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
export async function generate(page) {
  await page.locator('#gen-start').click();
  await page.waitForFunction(() => !['running', 'idle'].includes(document.querySelector('#gen-status').dataset.state), null, { timeout: 240_000 });
  await settled(page);
  const el = page.locator('#gen-status');
  const ids = (await el.getAttribute('data-ids')).split(',').filter(Boolean).map(Number);
  return { state: await el.getAttribute('data-state'), ids, message: await el.textContent(), text: await page.locator('#text').inputValue() };
}

/** Asserts that a run of the Generate control equals `attnlab generate` with the same settings. */
export async function assertGenerationMatchesCli(page, text, settings, cliFlags) {
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
export async function pageRoles(page, heads) {
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
export function assertRolesMatchCli(shown, modelDir, text) {
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
export function pngSize(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
}
