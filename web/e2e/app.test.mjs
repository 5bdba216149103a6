// End-to-end tests of the app in real headless Chromium: once on WebGPU (SwiftShader, forced
// with #backend=webgpu: Auto would pick the CPU here), once without WebGPU (the CPU worker). Run by the README's test command after `trunk build --release`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { ARTIFACTS, assertTopFiveIsCli, cliTrace, focusCell, fullPageShot, nextResult, painted, parseShown, requestsSince, ROOT, setText, settled, suiteApp } from './common.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

const LESSON = '나는 어제 산 커피를 오늘 마셨다';

const tokenStrip = (page) =>
  page.$$eval('#token-strip .tok .piece', (els) => els.map((e) => e.textContent));
const headMapPixels = (page) => page.evaluate(() => document.querySelector('#head-map')?.toDataURL() ?? null);


const readout = async (page) => {
  const out = {};
  for (const f of ['score', 'scaled', 'masked', 'weight']) {
    out[f] = parseShown(await page.locator(`#cell-readout [data-field=${f}]`).textContent());
  }
  return out;
};

const close = (got, want, what) => {
  const w = want === null ? -Infinity : want;
  if (w === -Infinity || got === -Infinity) {
    assert.equal(got, w, what);
    return;
  }
  // the page prints 4 decimals; GPU and CPU agree within 1e-4 + 1e-3·|x|
  assert.ok(Math.abs(got - w) <= 1.5e-4 + 1e-3 * Math.abs(w), `${what}: page ${got}, CLI ${w}`);
};

/** Checks that the numbers the page shows for cells of head (l, h) equal `attnlab trace`. */
async function cellsMatchCli(page, l, h, cells) {
  await page.locator(`[data-head="${l}.${h}"]`).click();
  const text = await page.locator('#text').inputValue();
  const cli = cliTrace(text, l, h).heads[0];
  for (const [i, j] of cells) {
    await focusCell(page, i, j);
    const got = await readout(page);
    close(got.score, cli.scores[i][j], `QKᵀ[${i},${j}]`);
    close(got.scaled, cli.scaled[i][j], `scaled[${i},${j}]`);
    close(got.masked, cli.masked[i][j], `masked[${i},${j}]`);
    close(got.weight, cli.weights[i][j], `weight[${i},${j}]`);
    // the cell taken apart: Σ q·k is QKᵀ, the chain ends in the weight
    const drill = async (f) => parseShown(await page.locator(`#drill [data-field=${f}]`).textContent());
    close(await drill('drill-sum'), cli.scores[i][j], `drill Σ q·k [${i},${j}]`);
    close(await drill('drill-scaled'), cli.scaled[i][j], `drill ÷√d_k [${i},${j}]`);
    close(await drill('drill-weight'), cli.weights[i][j], `drill weight [${i},${j}]`);
  }
  // the token strip shows the CLI's tokens
  const cliTokens = cliTrace(text, l, h).tokens.map((t) => t.display);
  assert.deepEqual(await tokenStrip(page), cliTokens);
}

/** Types `text` one key at a time; after every key the strip and the heatmap must change. */
async function typeAndWatch(page, text) {
  let strip = await tokenStrip(page);
  let pixels = await headMapPixels(page);
  for (const ch of text) {
    await page.keyboard.type(ch);
    const p = await settled(page);
    const nowStrip = await tokenStrip(page);
    const nowPixels = await headMapPixels(page);
    assert.equal(nowStrip.length, p.tokens, 'the strip shows the tokens that were run');
    assert.notDeepEqual(nowStrip, strip, `token strip unchanged after typing ${JSON.stringify(ch)}`);
    assert.notEqual(nowPixels, pixels, `heatmap unchanged after typing ${JSON.stringify(ch)}`);
    strip = nowStrip;
    pixels = nowPixels;
  }
}

/** A Hangul syllable typed through an IME: jamo composition, then commit. */
async function composeHangul(page, cdp, steps, committed) {
  const before = await painted(page);
  const logBefore = await page.evaluate(() => window.__attnlab.log.length);
  for (const s of steps) {
    await cdp.send('Input.imeSetComposition', { text: s, selectionStart: s.length, selectionEnd: s.length });
  }
  await page.waitForTimeout(400);
  const composing = await page.locator('#text').inputValue();
  assert.ok(composing.endsWith(steps.at(-1)), `the IME shows ${steps.at(-1)} while composing: ${composing}`);
  const during = await page.evaluate(() => window.__attnlab.log.length);
  assert.equal(during, logBefore, 'nothing is recomputed while a syllable is being composed');
  assert.equal((await painted(page)).generation, before.generation);
  await cdp.send('Input.insertText', { text: committed });
  const p = await settled(page);
  assert.ok(p.text.endsWith(committed), `committed ${committed}: ${p.text}`);
}

async function flow(page, context, backend) {
  // the badge names the backend
  const badge = await page.locator('#backend').textContent();
  assert.match(badge, backend === 'webgpu' ? /WebGPU/ : /CPU/);
  assert.equal((await painted(page)).backend, backend);

  // the lesson sentence is there at the start, with the CLI's tokens and numbers
  assert.equal(await page.locator('#text').inputValue(), LESSON);
  await cellsMatchCli(page, 1, 2, [[5, 2], [3, 3], [1, 4], [0, 0]]);

  // English, one key at a time
  await page.locator('#text').fill('');
  await page.locator('#run-status').waitFor();
  await page.locator('#text').focus();
  await typeAndWatch(page, 'Which do you like');

  // Korean typed with composition events (ㅋ → 커 → 커ㅍ → 커피)
  const cdp = await context.newCDPSession(page);
  await page.keyboard.type(' ');
  await settled(page);
  await composeHangul(page, cdp, ['ㅋ', '커'], '커');
  await composeHangul(page, cdp, ['ㅍ', '피'], '피');
  await typeAndWatch(page, '를');
  await cellsMatchCli(page, 2, 1, [[4, 1], [2, 3]]);

  // the τ slider changes the comparison (temperature panel only)
  const entropy = (v) => page.locator(`[data-variant=${v}]`).getAttribute('data-mean-entropy');
  const scaled0 = await entropy('scaled');
  const temp0 = await entropy('temperature');
  await page.locator('#tau').fill('0.2');
  await page.waitForFunction((t0) => document.querySelector('[data-variant=temperature]').dataset.meanEntropy !== t0, temp0);
  assert.ok(Number(await entropy('temperature')) < Number(temp0), 'a lower τ sharpens the weights');
  assert.equal(await entropy('scaled'), scaled0);

  // applying the variant to the whole model changes the prediction
  const nextBefore = await page.locator('#next-last').textContent();
  const gen = (await painted(page)).generation;
  await page.locator('[data-variant=temperature] input[type=radio]').check();
  await page.locator('#apply').check();
  await nextResult(page, gen);
  const nextAfter = await page.locator('#next-last').textContent();
  assert.notEqual(nextAfter, nextBefore, 'the next-token list moved');
  // …and the page's numbers equal the CLI run with the same options
  const text = await page.locator('#text').inputValue();
  const cli = cliTrace(text, 0, 0, ['--temperature', '0.2']);
  await assertTopFiveIsCli(page, '#next-last', cli.next, 'τ = 0.2');
  await page.locator('#apply').uncheck();
  await nextResult(page, gen + 1);

  // the picked query token drives the weighted sum and a second next-token list
  await page.locator('#token-strip .tok').first().click();
  await page.locator('#next-query').waitFor();
  assert.match(await page.locator('#formula').textContent(), /×V\(/);
}

for (const backend of ['webgpu', 'cpu']) {
  describe(`the app on ${backend === 'webgpu' ? 'WebGPU' : 'the CPU (no WebGPU)'}`, () => {
    const app = suiteApp(backend === 'webgpu' ? { webgpu: true, query: '#backend=webgpu' } : { webgpu: false });

    test('typing English and Korean updates every view, with the CLI\'s numbers', async () => {
      await flow(app.page, app.context, backend);
    });

    test('a screenshot at 1280×800, and no horizontal scrolling on a phone', async () => {
      const { page } = app;
      await setText(page, LESSON);
      await page.screenshot({ path: path.join(ARTIFACTS, `attnlab-${backend}-1280x800.png`) });
      await fullPageShot(page, path.join(ARTIFACTS, `attnlab-${backend}-full.png`));
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth);
      await fullPageShot(page, path.join(ARTIFACTS, `attnlab-${backend}-390.png`));
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390px`);
      await page.setViewportSize({ width: 1280, height: 800 });
    });

    test('axe-core finds no serious or critical accessibility violation', async () => {
      const { page } = app;
      await setText(page, LESSON);
      await page.locator('#head-map').focus();
      await page.keyboard.press('ArrowDown');
      // injected through the DevTools protocol: the page's CSP rightly refuses inline scripts
      await page.evaluate(fs.readFileSync(path.join(ROOT, 'web/node_modules/axe-core/axe.min.js'), 'utf8'));
      const violations = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ['violations'] });
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.target.join(' ') }));
      });
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      assert.deepEqual(bad, [], JSON.stringify(violations));
    });

    test('tokens past the context are dropped from the start and flagged', async () => {
      const { page } = app;
      const long = Array.from({ length: 60 }, (_, i) => `문장 ${i} coffee`).join(' ');
      const p = await setText(page, long);
      assert.equal(p.tokens, 128, 'the run is the last n_positions tokens');
      const all = await page.locator('#token-strip .tok').count();
      const shown = await page.locator('#token-strip .tok.dropped').count();
      const hidden = Number(((await page.locator('#hidden-dropped').textContent().catch(() => '+0')) ?? '+0').slice(1));
      const dropped = shown + hidden;
      assert.ok(shown > 0 && shown <= 32 && all - shown === 128, `${shown} of ${all} flagged`);
      const cliDropped = cliTrace(long, 0, 0).dropped;
      assert.equal(dropped, cliDropped, 'flagged + hidden = the tokens the CLI drops');
      assert.match(await page.locator('.tokens-card .warn').textContent(), new RegExp(`\\b${dropped}\\b`));
      await setText(page, LESSON);
      assert.equal(await page.locator('#token-strip .tok.dropped').count(), 0);
    });

    test('user text is never HTML, the CSP holds, and nothing goes over the network after load', async () => {
      const { page, srv } = app;
      const dialogs = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        d.dismiss().catch(() => {});
      });
      const requestsBefore = srv.requests.length;
      const xss = '<img src=x onerror=alert(1)><script>alert(2)</script>';
      await setText(page, xss);
      await page.locator('#token-strip .tok').first().waitFor();
      assert.equal(await page.locator('img, main script').count(), 0, 'no element made from the text');
      assert.match((await tokenStrip(page)).join(''), /<img/);
      await page.locator('#token-strip .tok').nth(2).click();
      assert.match(await page.locator('#formula').textContent(), /</);
      await page.waitForTimeout(300);
      assert.deepEqual(dialogs, []);
      // the policy: no inline script, no eval beyond what wasm needs
      const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      const scriptSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src'));
      assert.equal(scriptSrc, "script-src 'self' 'wasm-unsafe-eval'");
      assert.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
      const violations = await page.evaluate(() => window.__cspViolations ?? []);
      assert.deepEqual(violations, []);
      await setText(page, LESSON);
      assert.deepEqual(requestsSince(srv, requestsBefore), [], 'requests after load');
    });

    if (backend === 'cpu') {
      test('every case of the bad-text corpus shows a result or a message, and the page stays responsive', async () => {
        const { page } = app;
        const corpus = JSON.parse(fs.readFileSync(path.join(ROOT, 'crates/model/tests/data/bad-text.json'), 'utf8'));
        assert.ok(corpus.length >= 50);
        for (const c of corpus) {
          let text = c.text;
          if (c.repeat_to_chars) text = Array.from({ length: c.repeat_to_chars }, (_, i) => [...c.text][i % [...c.text].length]).join('');
          // as a paste: the value at once and one input event (Playwright's fill types a
          // multi-line text line by line, which takes a minute for 10 000 newlines)
          await page.$eval('#text', (el, v) => {
            el.value = v;
            el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertFromPaste' }));
          }, text);
          const value = await page.locator('#text').inputValue();
          if (value.length === 0) {
            await page.locator('#run-status').waitFor();
          } else {
            await settled(page, 60_000);
            assert.ok((await page.locator('#token-strip .tok').count()) > 0, c.name);
          }
          const t0 = Date.now();
          assert.equal(await page.evaluate(() => 1 + 1), 2);
          assert.ok(Date.now() - t0 < 2000, `${c.name}: the page answered slowly`);
        }
      });

      test('the language switch changes every label, and the URL restores the whole state', async () => {
        const { page, context } = app;
        // language: Korean by default here (ko-KR), English after the switch
        await setText(page, LESSON);
        assert.equal(await page.locator('h1').textContent(), '어텐션 실험실');
        await page.locator('button.lang').click();
        assert.equal(await page.locator('h1').textContent(), 'attnlab');
        assert.equal(await page.locator('html').getAttribute('lang'), 'en');
        assert.match(await page.locator('#heads-h').textContent(), /All heads/);
        // a state worth restoring
        await setText(page, 'Which do you like better, coffee or tea?');
        await page.locator('[data-head="2.3"]').click();
        await page.locator('#token-strip .tok').nth(3).click();
        await page.locator('#tau').fill('0.35');
        await page.locator('[data-variant=temperature] input[type=radio]').check();
        let gen = (await painted(page)).generation;
        await page.locator('#apply').check();
        await nextResult(page, gen);
        gen = (await painted(page)).generation;
        await page.locator('#ablate').check();
        await nextResult(page, gen);
        const url = page.url();
        assert.match(url, /#t=Which/);
        const next = await page.locator('#next-query').textContent();
        const other = await context.newPage();
        await other.goto(url);
        await other.waitForFunction(() => window.__attnlab?.painted);
        assert.equal(await other.locator('#text').inputValue(), 'Which do you like better, coffee or tea?');
        assert.equal(await other.locator('h1').textContent(), 'attnlab');
        assert.match(await other.locator('#head-h').textContent(), /Layer 2 · Head 3/);
        assert.equal(await other.locator('#tau').inputValue(), '0.35');
        assert.ok(await other.locator('#apply').isChecked());
        assert.ok(await other.locator('#ablate').isChecked());
        assert.equal(await other.locator('[data-head="2.3"]').getAttribute('class').then((c) => /ablated/.test(c)), true);
        assert.equal(await other.locator('#next-query').textContent(), next, 'the same numbers after the round trip');
        assert.equal(other.url(), url);
        await other.close();
        await page.locator('button.lang').click();
        assert.equal(await page.locator('h1').textContent(), '어텐션 실험실');
      });

      test('unknown or malformed URL parameters are ignored with a notice, never run as HTML', async () => {
        const page = await app.context.newPage();
        const dialogs = [];
        page.on('dialog', (d) => {
          dialogs.push(d.message());
          d.dismiss().catch(() => {});
        });
        const evil = encodeURIComponent('<img src=x onerror=alert(1)>');
        await page.goto(`${app.srv.url}#t=${evil}&zzz=${encodeURIComponent('<script>alert(2)</script>')}&l=99&tau=abc&ablate=9.9`);
        await page.waitForFunction(() => window.__attnlab?.painted);
        const notice = await page.locator('#url-notice').textContent();
        assert.match(notice, /zzz=<script>alert\(2\)<\/script>/);
        assert.match(notice, /tau=abc/);
        assert.match(notice, /ablate=9\.9/);
        assert.equal(await page.locator('#text').inputValue(), '<img src=x onerror=alert(1)>');
        assert.equal(await page.locator('img, main script').count(), 0);
        // layer 99 is clamped to the last layer, where the heading writes it ("… — 층 3 · 헤드 1")
        const layers = await page.locator('.heads-row:not(.head-labels)').count();
        assert.ok(layers > 1, `${layers} layers`);
        assert.match(await page.locator('#head-h').textContent(), new RegExp(` — (층|[Ll]ayer) ${layers - 1} · (헤드|[Hh]ead) \\d+$`), 'layer 99 is clamped to the last layer');
        await page.waitForTimeout(300);
        assert.deepEqual(dialogs, []);
        assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
        await page.close();
      });

      test('the model loads with a visible progress bar', async () => {
        const page = await app.context.newPage();
        const cdp = await app.context.newCDPSession(page);
        await cdp.send('Network.enable');
        // a first visit's path: past the offline copy this context's earlier pages made (a
        // later visit loads from it at once — no network to show progress for)
        await cdp.send('Network.setBypassServiceWorker', { bypass: true });
        // ≈ 4 MB/s: the 9.5 MB of weights take a couple of seconds
        await cdp.send('Network.emulateNetworkConditions', {
          offline: false,
          latency: 20,
          downloadThroughput: 4_000_000,
          uploadThroughput: 4_000_000,
        });
        await page.goto(app.srv.url);
        const bar = page.locator('#load-progress');
        await page.waitForFunction(() => {
          const b = document.querySelector('#load-progress');
          return b && Number(b.getAttribute('value')) > 0;
        });
        const [value, max] = [Number(await bar.getAttribute('value')), Number(await bar.getAttribute('max'))];
        assert.ok(value > 0 && value < max, `progress ${value} / ${max}`);
        assert.match(await page.locator('.loading label').textContent(), /MB/);
        await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
        assert.equal(await bar.count(), 0, 'the bar goes away once loaded');
        await page.close();
      });
    }

    if (backend === 'webgpu') {
      test('when the GPU is lost the next keystroke runs on the CPU with the same numbers', async () => {
        const { page } = app;
        await setText(page, '나는 어제');
        await page.evaluate(() => window.__attnlab.loseGpu());
        await page.locator('#text').focus();
        await page.keyboard.press('End');
        await page.keyboard.type(' 산');
        const p = await settled(page);
        assert.equal(p.backend, 'cpu');
        assert.match(await page.locator('#backend').textContent(), /CPU/);
        await page.locator('#notice').waitFor();
        await cellsMatchCli(page, 3, 0, [[2, 1], [1, 1]]);
      });
    }
  });
}
