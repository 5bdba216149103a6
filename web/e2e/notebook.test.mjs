// The Python package's widgets in a real JupyterLab (headless Chromium): the example notebook
// (crates/py/examples/attention.ipynb) run top to bottom, its widgets painted, typing in a
// widget's text box repaints it, a cell's numbers are the CLI's, the dark theme is followed,
// the saved HTML file opens on its own, and no request leaves localhost.
//
// Needs target/py-venv with the package and JupyterLab installed (the test command's
// `build_py_wheel`; ATTNLAB_PY names another python).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { launch } from './browser.mjs';
import { ARTIFACTS } from './common.mjs';
import { cliJson } from './features.mjs';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PY = process.env.ATTNLAB_PY ?? path.join(ROOT, 'target', 'py-venv', 'bin', 'python3');
const NOTEBOOK = path.join(ROOT, 'crates', 'py', 'examples', 'attention.ipynb');
const SMOLLM2 = process.env.ATTNLAB_SMOLLM2 ?? path.join(ROOT, 'target', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const LESSON = '나는 어제 산 커피를 오늘 마셨다';

fs.mkdirSync(ARTIFACTS, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function until(what, check, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check().catch(() => null);
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Distinct colours in a canvas: more than a few means something was drawn. */
const colours = (page, selector) =>
  page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return seen.size;
  });

/** The mean luminance of a canvas's top-left corner (its background). */
const corner = (page, selector) =>
  page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, 8, 8).data;
    let s = 0;
    for (let i = 0; i < d.length; i += 4) s += 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
    return s / (d.length / 4) / 255;
  });

// JupyterLab gets every check; Notebook 7 (the same widget through its own front end) the
// notebook run, the painted widgets, typing and the CLI's numbers.
const APPS = [
  { name: 'JupyterLab 4', module: 'jupyterlab', args: ['--LabApp.expose_app_in_browser=True', '--LabApp.news_url=', '--LabApp.extension_manager=readonly'], url: '/lab/tree/attention.ipynb', full: true },
  { name: 'Notebook 7', module: 'notebook', args: ['--JupyterNotebookApp.expose_app_in_browser=True'], url: '/notebooks/attention.ipynb', full: false },
];

for (const app of APPS) describe(`the Python package in ${app.name}`, () => {
  let lab;
  let dir;
  let port;
  let browser;
  let page;
  const errors = [];
  const outside = [];

  before(async () => {
    assert.ok(fs.existsSync(PY), `${PY} is missing: run scripts/test.sh (build_py_wheel) first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-lab-'));
    fs.copyFileSync(NOTEBOOK, path.join(dir, 'attention.ipynb'));
    port = await freePort();
    // a JupyterLab of its own: its config, data and runtime dirs inside the temp dir
    const env = {
      ...process.env,
      JUPYTER_CONFIG_DIR: path.join(dir, '.jupyter'),
      JUPYTER_RUNTIME_DIR: path.join(dir, '.runtime'),
      IPYTHONDIR: path.join(dir, '.ipython'),
      ATTNLAB_SMOLLM2: SMOLLM2,
    };
    lab = spawn(
      PY,
      ['-m', app.module, '--no-browser', `--port=${port}`, '--ip=127.0.0.1', `--ServerApp.root_dir=${dir}`,
        '--IdentityProvider.token=', '--ServerApp.password=', '--allow-root', ...app.args],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    lab.stdout.on('data', (d) => (log += d));
    lab.stderr.on('data', (d) => (log += d));
    await until(() => `${app.name} on port ${port}:\n${log}`, async () => (await fetch(`http://127.0.0.1:${port}/api/status`)).ok, 90_000);
    browser = await launch({ webgpu: false, width: 1400, height: 1000, lang: 'ko-KR' });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    page.on('pageerror', (e) => errors.push(String(e)));
    await browser.context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && !['127.0.0.1', 'localhost'].includes(url.hostname)) {
        outside.push(url.href);
        return route.abort();
      }
      return route.continue();
    });
  });

  after(async () => {
    await browser?.close();
    lab?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`the example notebook runs top to bottom and its widgets paint, follow typing${app.full ? ', the keyboard and the theme, save themselves' : ''} and show the CLI’s numbers`, async () => {
    await page.goto(`http://127.0.0.1:${port}${app.url}`);
    await page.waitForFunction(() => window.jupyterapp?.shell?.currentWidget?.context?.sessionContext?.session?.kernel, null, { timeout: 120_000 });
    await page.waitForFunction(() => window.jupyterapp.shell.currentWidget.context.sessionContext.session.kernel.status === 'idle', null, { timeout: 120_000 });
    // Notebook 7.6.5's own start-up throws once on this JupyterLab (reading a settings schema,
    // in notebook_core, before any cell runs): what counts is every error from here on
    errors.length = 0;
    // JupyterLab asks whether to fetch its news: no (and nothing is fetched either way here)
    await page.locator('.jp-toast-button', { hasText: 'No' }).click({ timeout: 10_000 }).catch(() => {});
    await page.evaluate(() => window.jupyterapp.commands.execute('notebook:run-all-cells'));
    // every code cell ran (an execution count) and none raised
    const cells = await until('every cell to run', () =>
      page.evaluate(() => {
        const nb = window.jupyterapp.shell.currentWidget.content;
        const code = nb.widgets.filter((c) => c.model.type === 'code');
        const done = code.every((c) => c.model.executionCount != null) && window.jupyterapp.shell.currentWidget.context.sessionContext.session.kernel.status === 'idle';
        if (!done) return null;
        return code.map((c) => ({ n: c.model.executionCount, errors: c.model.outputs.toJSON().filter((o) => o.output_type === 'error').map((o) => `${o.ename}: ${o.evalue}`) }));
      }), 240_000);
    assert.deepEqual(cells.flatMap((c) => c.errors), [], 'a cell raised');
    // three widgets: the bundled model live, SmolLM2 live, attention given to view()
    await until('three painted widgets', async () => (await page.$$('.attnlab-widget[data-painted]')).length === 3, 60_000);
    const widgets = await page.$$('.attnlab-widget');
    for (const [k, w] of widgets.entries()) {
      await w.scrollIntoViewIfNeeded();
      const grid = await w.$('canvas.attnlab-grid');
      const map = await w.$('canvas.attnlab-map');
      const drawn = await grid.evaluate((c) => c.width > 0) && (await map.evaluate((c) => c.width > 0));
      assert.ok(drawn, `widget ${k}'s canvases have a size`);
    }
    assert.ok((await colours(page, '.attnlab-widget >> nth=0 >> canvas.attnlab-grid')) > 20, 'the heads grid is drawn');
    assert.ok((await colours(page, '.attnlab-widget >> nth=0 >> canvas.attnlab-map')) > 5, 'the head map is drawn');
    assert.ok((await colours(page, '.attnlab-widget >> nth=1 >> canvas.attnlab-grid')) > 20, "SmolLM2's heads grid is drawn");
    // the first widget (layer 2, head 1 of the bundled model): its last row's numbers are the CLI's
    const first = page.locator('.attnlab-widget').nth(0);
    // the page with widget k in view, into target/e2e
    const shot = async (k, name) => {
      await page.locator('.attnlab-widget').nth(k).scrollIntoViewIfNeeded();
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: false });
    };
    await first.scrollIntoViewIfNeeded();
    const rowOf = () => first.locator('.attnlab-steps tr[data-key]').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td[data-v]')].map((td) => Number(td.dataset.v))));
    const assertRowIsCli = async (text, head = 1) => {
      const cli = cliJson(['trace', text, '--layer', '2', '--head', String(head)]);
      const h = cli.heads[0];
      const t = h.weights.length;
      const shown = await rowOf();
      assert.equal(shown.length, t, `the steps table lists the last row's ${t} keys`);
      shown.forEach(([score, scaled, masked, weight], j) => {
        assert.equal(score, Math.fround(h.scores[t - 1][j]), `q·k at key ${j}`);
        assert.equal(scaled, Math.fround(h.scaled[t - 1][j]), `scaled at key ${j}`);
        assert.equal(masked, Math.fround(h.masked[t - 1][j]), `masked at key ${j}`);
        assert.equal(weight, Math.fround(h.weights[t - 1][j]), `weight at key ${j}`);
      });
    };
    await assertRowIsCli(LESSON);
    if (app.full) await keyboard();
    async function keyboard() {
    // the keyboard: ↑ on the map moves the query row, → a key; → on the heads grid picks the next head
    const t0 = (await rowOf()).length;
    await first.locator('canvas.attnlab-map').focus();
    await page.keyboard.press('ArrowUp');
    await until('the row above', async () => (await first.locator('.attnlab-steps h4').textContent()).startsWith(`쿼리 행 ${t0 - 2} `), 5_000);
    await page.keyboard.press('ArrowRight');
    assert.match(await first.locator('.attnlab-hover').textContent(), /→ .*: [0-9.]+$/);
    await page.keyboard.press('ArrowDown');
    await first.locator('canvas.attnlab-grid').focus();
    await page.keyboard.press('ArrowRight');
    await until('head 2.2 drawn', async () => (await first.locator('h4', { hasText: '헤드 맵' }).textContent()).endsWith('레이어 2 · 헤드 2') && (await rowOf()).length === t0 && (await rowOf())[0][3] === Math.fround(cliJson(['trace', LESSON, '--layer', '2', '--head', '2']).heads[0].weights[t0 - 1][0]), 20_000);
    await assertRowIsCli(LESSON, 2);
    await page.keyboard.press('ArrowLeft');
    await until('head 2.1 again', async () => (await first.locator('h4', { hasText: '헤드 맵' }).textContent()).endsWith('레이어 2 · 헤드 1'), 20_000);
    await until('head 2.1 numbers', async () => { await assertRowIsCli(LESSON); return true; }, 20_000);
    }
    // typing in the widget's text box reruns the model in the kernel and repaints
    const before = Number(await first.getAttribute('data-painted'));
    const box = first.locator('textarea.attnlab-text');
    await box.click();
    await box.press('End');
    await box.pressSequentially(' 정말', { delay: 30 });
    let lastBox = '';
    setInterval(async () => { lastBox = `${await box.inputValue().catch(() => '?')} | ${await first.locator('.attnlab-status').textContent().catch(() => '?')}`; }, 500).unref();
    const typed = cliJson(['trace', `${LESSON} 정말`, '--layer', '0', '--head', '0']).tokens;
    const lastToken = typed[typed.length - 1].display;
    await until(() => `the typed text to be painted (box: ${lastBox})`, async () => Number(await first.getAttribute('data-painted')) > before && (await first.locator('.attnlab-steps h4').textContent()).includes(`${typed.length - 1} «${lastToken}»`), 30_000);
    await assertRowIsCli(`${LESSON} 정말`);
    if (!app.full) {
      await shot(0, 'notebook7-widget.png');
      assert.deepEqual(errors, [], 'no uncaught error on the page');
      assert.deepEqual(outside, [], 'no request left localhost');
      return;
    }
    // the map's buttons save PNG and SVG files
    const [png] = await Promise.all([page.waitForEvent('download'), first.locator('button.attnlab-png').click()]);
    assert.match(png.suggestedFilename(), /^attnlab-L2H1\.png$/);
    const [svg] = await Promise.all([page.waitForEvent('download'), first.locator('button.attnlab-svg').click()]);
    const svgText = fs.readFileSync(await svg.path(), 'utf8');
    assert.match(svgText, /^<svg xmlns/);
    assert.ok(svgText.includes(`>${lastToken}<`), 'the SVG names the tokens');
    // the dark theme: the widget follows JupyterLab's
    assert.ok((await corner(page, '.attnlab-widget >> nth=0 >> canvas.attnlab-grid')) > 0.8, 'light background first');
    await page.evaluate(() => window.jupyterapp.commands.execute('apputils:change-theme', { theme: 'JupyterLab Dark' }));
    await until('the dark theme', () => page.evaluate(() => document.body.dataset.jpThemeLight === 'false'), 30_000);
    await until('the widget drawn dark', async () => (await corner(page, '.attnlab-widget >> nth=0 >> canvas.attnlab-grid')) < 0.2, 10_000);
    assert.ok(await first.evaluate((e) => e.classList.contains('attnlab-dark')));
    await shot(0, 'notebook-widget-dark.png');
    await shot(2, 'notebook-view-dark.png');
    await page.evaluate(() => window.jupyterapp.commands.execute('apputils:change-theme', { theme: 'JupyterLab Light' }));
    await until('the widget drawn light again', async () => (await corner(page, '.attnlab-widget >> nth=0 >> canvas.attnlab-grid')) > 0.8, 10_000);
    await shot(0, 'notebook-widget-light.png');
    await shot(1, 'notebook-smollm2-light.png');
    // the file save_html wrote opens on its own, with no server
    const saved = path.join(dir, 'attention.html');
    assert.ok(fs.existsSync(saved), 'save_html wrote attention.html');
    const alone = await browser.context.newPage();
    alone.on('pageerror', (e) => errors.push(`saved file: ${e}`));
    await alone.goto(`file://${saved}`);
    await alone.waitForSelector('.attnlab-widget[data-painted]', { timeout: 20_000 });
    assert.ok((await colours(alone, 'canvas.attnlab-grid')) > 20, 'the saved file draws the heads grid');
    await alone.close();
    assert.deepEqual(errors, [], 'no uncaught error on the page');
    assert.deepEqual(outside, [], 'no request left localhost');
  });
});
