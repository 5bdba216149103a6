// End-to-end tests of the classroom features, in headless Chromium on the CPU path: every
// view embedded in a frame of another origin, both colour themes through axe-core, presenting
// (the button, F, ←/→ through the lesson, Esc) and a 200 % zoom, a dropped model kept on the
// device only when asked, then the offline copy: a
// reload with the network off, and a new build that replaces the cache (only its changed
// files downloaded), announced on the page. One browser for the whole file.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

import { allowErrors, ARTIFACTS, DIST, fullPageShot, requestsSince, ROOT, settled, suiteApp } from './common.mjs';
import { writeWorker } from '../sw-manifest.mjs';

fs.mkdirSync(ARTIFACTS, { recursive: true });
const LESSON = '나는 어제 산 커피를 오늘 마셨다';
const VIEWS = ['tokens', 'heads', 'head', 'flow', 'roles', 'steps', 'softmax', 'sum', 'next', 'generate', 'lens'];
const CARD = {
  tokens: '.tokens-card', heads: '.heads-card', head: '.head-card', flow: '.flow-card', roles: '.roles-card',
  steps: '.steps-card', softmax: '.compare-card', sum: '.sum-card', next: '.next-card', generate: '.gen-card', lens: '.lens-card',
};
const AXE = fs.readFileSync(path.join(ROOT, 'web/node_modules/axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page. */
async function axeBad(page) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.target.join(' ') }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A host page on its own origin (another port) with one iframe. */
function hostPage() {
  const html = '<!doctype html><meta charset="utf-8"><title>slides</title><body style="margin:0">' +
    '<iframe id="f" title="attnlab" style="width:820px;height:620px;border:0"></iframe>';
  const server = http.createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => new Promise((r) => server.close(r)) })));
}

/** Every pair of cards that overlap on screen (their names). */
// Blocks far off screen are not laid out (content-visibility: auto) and keep the height they
// last had until they come near the screen; a reader scrolling down sees each one laid out
// at the current width. So the page is scrolled through (top to bottom, half a screen at a
// time) before the cards are measured, and back to where it was.
const overlaps = (page) => page.evaluate(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const was = window.scrollY;
  for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
    window.scrollTo(0, y);
    await frame();
  }
  window.scrollTo(0, was);
  await frame();
  const cards = [...document.querySelectorAll('section.card')].filter((c) => c.offsetParent !== null);
  const out = [];
  for (let i = 0; i < cards.length; i++) {
    for (let j = i + 1; j < cards.length; j++) {
      const [a, b] = [cards[i].getBoundingClientRect(), cards[j].getBoundingClientRect()];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 1) out.push(`${cards[i].className} × ${cards[j].className}`);
    }
  }
  return out;
});
const sideways = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('in the classroom (CPU path)', () => {
  const app = suiteApp({ webgpu: false, query: `#t=${encodeURIComponent(LESSON)}` });

  test('every view, embedded in a frame of another origin, paints alone; input=0 leaves out the text box', async () => {
    const host = await hostPage();
    const page = await app.context.newPage();
    try {
      await page.goto(host.url);
      assert.notEqual(new URL(host.url).origin, new URL(app.srv.url).origin);
      const codes = [...VIEWS, ...Array.from({ length: 9 }, (_, i) => `lesson-${i + 1}`)];
      for (const [n, code] of codes.entries()) {
        const input = n % 2 === 0 ? '&input=0' : '';
        // a query of its own each time: a new document, not a jump within the last one
        const src = `${app.srv.url}?view=${n}#t=${encodeURIComponent(LESSON)}&embed=${code}${input}`;
        await page.evaluate((s) => {
          document.getElementById('f').src = s;
        }, src);
        const frame = await (await page.waitForSelector('#f')).contentFrame();
        await frame.waitForFunction(
          (c) => document.documentElement.dataset.embed === c && window.__attnlab?.painted && !window.__attnlab.stale,
          code,
          { timeout: 120_000 },
        );
        const lesson = code.startsWith('lesson-');
        const card = lesson ? '.lesson-card' : CARD[code];
        const seen = await frame.evaluate((card) => {
          const cards = [...document.querySelectorAll('section.card')];
          const el = document.querySelector(card);
          const r = el?.getBoundingClientRect();
          return {
            cards: cards.map((c) => c.className),
            size: r ? [Math.round(r.width), Math.round(r.height)] : null,
            top: r?.top,
            header: !!document.querySelector('header.top'),
            text: !!document.querySelector('#text'),
            open: document.querySelector('#open-full')?.getAttribute('href') ?? null,
            section: document.querySelector('#lesson')?.dataset.section ?? null,
            sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          };
        }, card);
        assert.equal(seen.cards.length, 1, `${code}: one card, not ${seen.cards.join(', ')}`);
        assert.ok(seen.size && seen.size[0] > 300 && seen.size[1] > 100, `${code}: card size ${seen.size}`);
        assert.ok(seen.top < 620, `${code}: on the frame's screen`);
        assert.equal(seen.header, false, code);
        assert.equal(seen.text, !input && !lesson, `${code}: the text box`);
        assert.ok(seen.sideways <= 0, `${code}: scrolls sideways by ${seen.sideways}px in an 820px frame`);
        assert.ok(seen.open.startsWith('#t=') && !seen.open.includes('embed=') && !seen.open.includes('input='), seen.open);
        if (lesson) assert.equal(seen.section, code.slice('lesson-'.length));
        // the drawings are there: the map's canvas has coloured pixels
        if (code === 'head' || code === 'heads') {
          const inked = await frame.evaluate((sel) => {
            const c = document.querySelector(sel);
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++;
            return n / (d.length / 4);
          }, code === 'head' ? '#head-map' : '.heads-canvas');
          assert.ok(inked > 0.2, `${code}: ${inked} of the canvas drawn`);
        }
        if (n === 0) await page.screenshot({ path: path.join(ARTIFACTS, 'embed-tokens.png') });
        if (code === 'head') await page.screenshot({ path: path.join(ARTIFACTS, 'embed-head.png') });
        if (code === 'lesson-6') await page.screenshot({ path: path.join(ARTIFACTS, 'embed-lesson-6.png') });
      }
      // the link opens the whole page with the same state
      const frame = await (await page.waitForSelector('#f')).contentFrame();
      const [full] = await Promise.all([app.context.waitForEvent('page'), frame.locator('#open-full').click()]);
      await full.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
      assert.ok(full.url().startsWith(app.srv.url) && !full.url().includes('embed='), full.url());
      assert.equal(await full.locator('header.top').count(), 1);
      assert.equal(await full.locator('#lesson').getAttribute('data-section'), '9');
      await full.close();
    } finally {
      await page.close();
      await host.close();
    }
  });

  test('light and dark themes: both pass axe, the switch and the system preference choose, the mask stays visible', async () => {
    const { page } = app;
    await page.emulateMedia({ colorScheme: 'light' });
    await page.locator('#lesson-toggle').click();
    await page.locator('#lesson').waitFor();
    const bg = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    const light = await bg();
    assert.deepEqual(await axeBad(page), [], 'light');
    await fullPageShot(page, path.join(ARTIFACTS, 'theme-light.png'));
    // the system asks for dark: the page follows while the switch says "system"
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await bg();
    assert.notEqual(dark, light);
    const lum = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((a, b) => a + Number(b), 0) / 3;
    assert.ok(lum(dark) < 60 && lum(light) > 200, `${light} → ${dark}`);
    // chosen by the switch, kept in the URL, over the system's
    await page.emulateMedia({ colorScheme: 'light' });
    await page.locator('#theme-choice').selectOption('dark');
    await page.waitForFunction(() => location.hash.includes('theme=dark'));
    assert.equal(await bg(), dark);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await settled(page);
    assert.deepEqual(await axeBad(page), [], 'dark');
    await fullPageShot(page, path.join(ARTIFACTS, 'theme-dark.png'));
    // the head map's masked cells against the dark card: still plainly visible
    const contrast = await page.evaluate(() => {
      const c = document.querySelector('#head-map');
      const m = Number(c.dataset.margin) * devicePixelRatio;
      const cell = Number(c.dataset.cellSize) * devicePixelRatio;
      const px = c.getContext('2d').getImageData(Math.round(m + cell * 1.5), Math.round(m + cell * 0.5), 1, 1).data;
      const card = getComputedStyle(c.closest('.card')).backgroundColor.match(/\d+/g).map(Number);
      const l = (v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      const L = (r, g, b) => 0.2126 * l(r) + 0.7152 * l(g) + 0.0722 * l(b);
      const [a, b] = [L(px[0], px[1], px[2]), L(card[0], card[1], card[2])];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
    assert.ok(contrast >= 3, `masked cell vs the dark card: ${contrast.toFixed(2)}:1`);
    // a link keeps the theme
    const reopened = await app.context.newPage();
    await reopened.goto(app.srv.url + '#theme=dark');
    await reopened.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
    assert.equal(await reopened.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), dark);
    await reopened.close();
    await page.locator('#theme-choice').selectOption('auto');
    await page.waitForFunction(() => !location.hash.includes('theme='));
    await page.locator('#lesson-close').click();
  });

  test('presenting: one view large, F and Esc, ←/→ through the lesson; 200 % zoom neither scrolls sideways nor overlaps', async () => {
    const { page } = app;
    const rootPx = () => page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
    const normal = await rootPx();
    const onPage = await page.evaluate(() => document.querySelector('#head-map').getBoundingClientRect().width);
    // F presents the view that takes most of the screen
    await page.evaluate(() => document.querySelector('.steps-card').scrollIntoView({ block: 'start' }));
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('f');
    await page.waitForFunction(() => document.documentElement.dataset.present === 'steps');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.documentElement.dataset.present);
    // so does the button (at the top of the page: one of the first cards), and the bar picks another view
    await page.locator('#present-toggle').click();
    await page.waitForFunction(() => ['tokens', 'heads', 'head'].includes(document.documentElement.dataset.present));
    await page.locator('#present-view').selectOption('head');
    await page.waitForFunction(() => document.documentElement.dataset.present === 'head');
    assert.ok((await rootPx()) >= normal * 1.4, 'large type');
    assert.deepEqual(await page.$$eval('section.card', (cs) => cs.map((c) => c.className)), ['card head-card']);
    assert.equal(await page.locator('header.top').count(), 0);
    // on a 1280 × 1000 screen the map is larger than on the page, and fits below the bar
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.locator('#present-view').selectOption('heads');
    await page.locator('#present-view').selectOption('head');
    await page.waitForFunction(() => document.documentElement.dataset.present === 'head');
    await page.waitForTimeout(300);
    const map = await page.evaluate(() => {
      const r = document.querySelector('#head-map').getBoundingClientRect();
      return { width: r.width, bottom: r.bottom + scrollY, screen: innerHeight };
    });
    assert.ok(map.width > onPage, `the map drawn large (${map.width}px, on the page ${onPage}px)`);
    assert.ok(map.bottom <= map.screen, `the map ends at ${map.bottom}px of ${map.screen}px`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'present-head.png') });
    await page.setViewportSize({ width: 1280, height: 800 });
    // another view from the bar; Esc goes back to the whole page
    await page.locator('#present-view').selectOption('softmax');
    await page.waitForFunction(() => document.documentElement.dataset.present === 'softmax');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.documentElement.dataset.present);
    assert.equal(await rootPx(), normal);
    assert.equal(await page.locator('header.top').count(), 1);
    // F in the text box is a letter; on the page it presents — the open lesson, stepped by ←/→
    await page.locator('#text').press('f');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.present ?? null), null);
    const typed = `${LESSON} 그리고`;
    await page.locator('#text').fill(typed);
    await settled(page);
    await page.locator('#lesson-toggle').click();
    await page.locator('.lesson-dots .dot >> nth=3').click();
    await page.locator('#lesson-h').click(); // focus leaves the buttons: keys go to the page
    await page.keyboard.press('f');
    await page.waitForFunction(() => document.documentElement.dataset.present === 'lesson-4');
    const section = () => page.locator('#lesson').getAttribute('data-section');
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.querySelector('#lesson')?.dataset.section === '5');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.querySelector('#lesson')?.dataset.section === '4');
    assert.equal(await page.locator('.present-where').textContent(), '4 / 9');
    await page.locator('#present-next').click();
    assert.equal(await section(), '5');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.present), 'lesson-5');
    await page.screenshot({ path: path.join(ARTIFACTS, 'present-lesson-5.png') });
    for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.querySelector('#lesson')?.dataset.section === '9');
    assert.equal(await page.locator('#present-next').isDisabled(), true, 'the last section');
    await page.keyboard.press('f');
    await page.waitForFunction(() => !document.documentElement.dataset.present);
    // the text box comes back with the text typed before, not the page's first one
    assert.equal(await page.locator('#text').inputValue(), typed);
    // 200 % zoom of a 1280 × 800 window: the CSS viewport is 640 × 400
    await page.setViewportSize({ width: 640, height: 400 });
    try {
      await page.waitForTimeout(300);
      assert.ok((await sideways(page)) <= 0, `the page scrolls sideways by ${await sideways(page)}px at 200 %`);
      assert.deepEqual(await overlaps(page), [], 'cards overlap at 200 %');
      await page.keyboard.press('f');
      await page.waitForFunction(() => document.documentElement.dataset.present?.startsWith('lesson-'));
      await page.waitForTimeout(300);
      assert.ok((await sideways(page)) <= 0, `presenting scrolls sideways by ${await sideways(page)}px at 200 %`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'present-zoom-200.png') });
      await page.locator('#present-view').selectOption('head');
      await page.waitForFunction(() => document.documentElement.dataset.present === 'head');
      await page.waitForTimeout(300);
      assert.ok((await sideways(page)) <= 0, `the presented map scrolls sideways by ${await sideways(page)}px at 200 %`);
      await page.locator('#present-exit').click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    await page.locator('#lesson-close').click();
  });

  test('a dropped model is kept on this device only when asked; kept, it loads again without the files, and is forgotten', async () => {
    const { page } = app;
    const valid = path.join(ROOT, 'crates/model/tests/data/malformed/valid');
    const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => path.join(valid, f));
    const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
    const load = async () => {
      await page.locator('#own-files').setInputFiles(files);
      await page.waitForFunction(() => document.querySelector('#own-status')?.dataset.state === 'loaded', null, { timeout: 60_000 });
    };
    const kept = () => page.evaluate(() => caches.keys().then((k) => k.includes('attnlab-kept-model')));
    await load();
    assert.equal(await kept(), false, 'not kept unless asked');
    assert.equal(await page.locator('#kept').count(), 0);
    await page.locator('#keep-model').check();
    await load();
    await page.locator('#kept').waitFor();
    assert.equal(await kept(), true);
    const shown = await page.locator('#kept').textContent();
    assert.match(shown, /config\.json \+ model\.safetensors \+ tokenizer\.json/);
    const size = bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
    assert.ok(shown.includes(`(${size})`), `${shown} (${bytes} bytes)`);
    // a later visit: the bundled model, with the kept one offered
    await page.reload();
    await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
    await page.locator('#kept').waitFor();
    const bundled = await page.locator('#model-sizes').textContent();
    await page.locator('#kept-load').click();
    await page.waitForFunction(() => document.querySelector('#own-status')?.dataset.state === 'loaded', null, { timeout: 60_000 });
    await settled(page);
    assert.notEqual(await page.locator('#model-sizes').textContent(), bundled);
    await fullPageShot(page, path.join(ARTIFACTS, 'kept-model.png'));
    await page.locator('#kept-forget').click();
    await page.waitForFunction(() => !document.querySelector('#kept'));
    assert.equal(await kept(), false, 'forgotten');

    // a model kept by an earlier version of the page (three files, its name and size; no
    // manifest) is still offered and loads
    const legacy = files.map((f) => [...fs.readFileSync(f)]);
    await page.evaluate(async ([cfg, weights, tok, size]) => {
      const c = await caches.open('attnlab-kept-model');
      const put = (k, b) => c.put(k, new Response(new Uint8Array(b)));
      await put('kept-model/config.json', cfg);
      await put('kept-model/model.safetensors', weights);
      await put('kept-model/tokenizer.json', tok);
      await c.put('kept-model/size', new Response(String(size)));
      await c.put('kept-model/name', new Response('old.json + old.safetensors'));
    }, [...legacy, bytes]);
    await page.reload();
    await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
    await page.locator('#kept').waitFor();
    assert.ok((await page.locator('#kept').textContent()).includes(`old.json + old.safetensors (${size})`));
    await page.locator('#kept-load').click();
    await page.waitForFunction(() => document.querySelector('#own-status')?.dataset.state === 'loaded', null, { timeout: 60_000 });
    await settled(page);
    assert.notEqual(await page.locator('#model-sizes').textContent(), bundled);
    await page.locator('#kept-forget').click();
    await page.waitForFunction(() => !document.querySelector('#kept'));
    await page.reload();
    await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
  });

  test('offline: a reload works with the network off; a new build replaces the cache and says so', async () => {
    const { page, context, srv } = app;
    // on purpose: the fetch made with the network off fails, and the browser says so
    allowErrors(app, /^console\.error: Failed to load resource: net::ERR_INTERNET_DISCONNECTED$/);
    await page.waitForFunction(() => document.documentElement.dataset.offline === 'ready', null, { timeout: 60_000 });
    const buildA = await page.evaluate(() => document.documentElement.dataset.offlineBuild);
    // the header says so
    await page.locator('#offline-badge').waitFor();
    assert.deepEqual(await page.evaluate(() => caches.keys()), [`attnlab-build-/-${buildA}`]);
    // offline, and the server would answer nothing anyway (an empty folder)
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-empty-'));
    await context.setOffline(true);
    srv.setRoot(empty);
    try {
      const from = srv.requests.length;
      await page.reload();
      await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
      const p = await settled(page);
      // (the browser's own update check of /sw.js does not go through the page's offline
      // emulation; it finds an empty folder, and the page runs from its copy regardless)
      assert.deepEqual(requestsSince(srv, from), [], 'nothing reached the server');
      assert.ok(p.tokens > 0);
      // the network is really off: a file the copy does not keep cannot be fetched
      const fetched = await page.evaluate(() => fetch('model/README.md').then(() => 'fetched', () => 'failed'));
      assert.equal(fetched, 'failed');
      await page.screenshot({ path: path.join(ARTIFACTS, 'offline-reload.png') });
    } finally {
      await context.setOffline(false);
      srv.setRoot(DIST);
      fs.rmSync(empty, { recursive: true, force: true });
    }
    // a new build: one file changed
    const b = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-build-b-'));
    try {
      fs.cpSync(DIST, b, { recursive: true });
      fs.appendFileSync(path.join(b, 'style.css'), '\n/* build B */\n');
      // …and index.html's integrity attribute for it, as Trunk writes it for a real build
      const sri = `sha384-${crypto.createHash('sha384').update(fs.readFileSync(path.join(b, 'style.css'))).digest('base64')}`;
      const index = fs.readFileSync(path.join(b, 'index.html'), 'utf8');
      const relinked = index.replace(/(href="\.\/style\.css" integrity=")sha384-[^"]+"/, `$1${sri}"`);
      assert.notEqual(relinked, index, 'index.html links style.css with its integrity');
      fs.writeFileSync(path.join(b, 'index.html'), relinked);
      const buildB = writeWorker(b);
      assert.notEqual(buildB, buildA);
      srv.setRoot(b);
      const from = srv.requests.length;
      await page.reload();
      await page.locator('#update-notice').waitFor({ timeout: 60_000 });
      assert.match(await page.locator('#update-notice').textContent(), /새 버전|new version/);
      // installed beside the old copy, which the page still runs on until it reloads
      assert.deepEqual((await page.evaluate(() => caches.keys())).sort(), [`attnlab-build-/-${buildA}`, `attnlab-build-/-${buildB}`].sort());
      // only what changed came over the network: no model, no wasm
      const fetched = srv.requests.slice(from);
      assert.ok(fetched.includes('/style.css'), fetched.join(' '));
      for (const f of ['/model/model.safetensors', '/attnlab-app_bg.wasm', '/attnlab-worker_bg.wasm']) {
        assert.equal(fetched.filter((x) => x === f).length, 0, `${f} fetched again: ${fetched.join(' ')}`);
      }
      await page.screenshot({ path: path.join(ARTIFACTS, 'update-installed.png') });
      // the notice's button reloads into the new build, which works offline too
      await Promise.all([page.waitForEvent('load'), page.locator('#update-notice button').click()]);
      await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
      assert.deepEqual(await page.evaluate(() => caches.keys()), [`attnlab-build-/-${buildB}`], 'the old copy is gone');
      await context.setOffline(true);
      try {
        await page.reload();
        await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 120_000 });
        assert.match(await page.evaluate(() => fetch('style.css').then((r) => r.text())), /build B/);
      } finally {
        await context.setOffline(false);
      }
    } finally {
      srv.setRoot(DIST);
      fs.rmSync(b, { recursive: true, force: true });
    }
  });
});
