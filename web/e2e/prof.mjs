// A V8 CPU profile of the page's main thread while typing on the CPU path at about N tokens
// (24 keystrokes, the text reset every 6): self and inclusive time per function. For Rust
// names, profile a build whose app wasm skips wasm-opt:
//
//   sed -i 's|data-bin="attnlab-app" data-wasm-opt="z"|data-bin="attnlab-app" data-wasm-opt="0"|' index.html
//   trunk build --release --dist /tmp/dist-prof && git checkout index.html
//   ATTNLAB_DIST=/tmp/dist-prof node web/e2e/prof.mjs 120
import fs from 'node:fs';
import { TYPED, baseText, openApp, settled } from './common.mjs';
const SIZE = Number(process.argv[2] ?? 120);
const app = await openApp({ webgpu: false, query: '#backend=cpu' });
const { page } = app;
const base = await baseText(page, SIZE - 8);
await page.locator('#text').fill(base); await settled(page);
await page.locator('#text').press('End');
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable'); await cdp.send('Profiler.setSamplingInterval', { interval: 100 }); await cdp.send('Profiler.start');
for (let i = 0; i < 24; i++) { await page.keyboard.type(TYPED[i % TYPED.length]); await settled(page); if (i % 6 === 5) { await page.locator('#text').fill(base); await settled(page); await page.locator('#text').press('End'); } }
const { profile } = await cdp.send('Profiler.stop');
await app.close();
// self time per function, and inclusive time of top-level-ish
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map(); const incl = new Map();
const dt = profile.timeDeltas; let total = 0;
for (let i = 0; i < profile.samples.length; i++) { const d = dt[i] / 1000; const n = byId.get(profile.samples[i]); const nm = n.callFrame.functionName || n.callFrame.url.split('/').pop() || '(anon)'; if (nm === '(idle)' || nm === '(program)') continue; total += d;
  self.set(nm, (self.get(nm) ?? 0) + d);
  const seen = new Set(); let id = n.id; while (id !== undefined) { const f = byId.get(id).callFrame.functionName || '(anon)'; if (!seen.has(f)) { seen.add(f); incl.set(f, (incl.get(f) ?? 0) + d); } id = parent.get(id); } }
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([n, t]) => `${t.toFixed(1).padStart(7)} ms  ${n.slice(0, 110)}`).join('\n');
console.log(`busy ${total.toFixed(0)} ms over 24 keystrokes (+4 resets)\n-- self\n${top(self, 25)}\n-- inclusive\n${top(incl, 45)}`);
