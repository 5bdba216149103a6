// End-to-end tests of loading a model from files, on WebGPU (the engine is rebuilt): lens and
// generation on it equal the CLI; an invalid model is refused and the current one stays.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { ARTIFACTS, assertTopFiveIsCli, caughtUp, CLI, fullPageShot, nextResult, painted, requestsSince, setText, suiteApp } from './common.mjs';
import { LESSON, MALFORMED, FILES, loadFiles, cliJson, assertLensMatchesCli, assertGenerationMatchesCli, pageRoles, assertRolesMatchCli } from './features.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });

describe('loading a model from files (WebGPU)', () => {
  // WebGPU forced: Auto would pick the CPU on this machine's software GPU
  const app = suiteApp({ webgpu: true, query: '#backend=webgpu' });

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
