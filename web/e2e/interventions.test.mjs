// End-to-end tests of what the user changes: an ablated head (Δ against the unmodified model),
// a pinned query row, a clicked next token — on the CPU path.

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';

import { CLI, currentHash, nextResult, painted, setText, settled, suiteApp } from './common.mjs';
import { LESSON, num, cliPredict } from './features.mjs';

describe('interventions (CPU path)', () => {
  const app = suiteApp({ webgpu: false });

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
});
