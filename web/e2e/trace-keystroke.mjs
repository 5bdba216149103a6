// Where a CPU keystroke's time goes on the page: a Chromium performance trace (CDP Tracing) of
// N keystrokes at about T tokens, and per keystroke the main thread's tasks between the
// worker's answer (its task's end) and the page's 'message' handler, and after it.
//
//   node web/e2e/trace-keystroke.mjs [--samples 20] [--size 64] [--out target/e2e/keystroke-trace.json]
//       [--css 'extra CSS'] [--eval 'JS run on the page before typing'] [--quiet]
//       [--model smollm2 --source FILE --chars N]
//
// `--model smollm2`: on SmolLM2 (served in models/), typing at the end of FILE's first N
// characters (tools/long/long-en.txt: its first 4,600 are 982 tokens) instead of a text of
// about `--size` tokens.
import fs from 'node:fs';
import { TYPED, baseText, openApp, servedModelPainted, settled } from './common.mjs';

const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i > 0 ? process.argv[i + 1] : d;
};
const SAMPLES = Number(arg('samples', '20'));
const SIZE = Number(arg('size', '64'));
const OUT = arg('out', 'target/e2e/keystroke-trace.json');
// extra CSS put on the page before typing (to try a change without a build)
const CSS = arg('css', '');
const EVAL = arg('eval', '');
const MODEL = arg('model', '');
if (MODEL && !arg('source', '')) throw new Error('--model needs --source FILE (and --chars N)');
const app = await openApp({ webgpu: false, query: `#backend=cpu${MODEL ? `&model=${MODEL}` : ''}` });
const { page } = app;
if (MODEL) await servedModelPainted(page);
if (CSS) await page.addStyleTag({ content: CSS });
if (EVAL) await page.evaluate(EVAL);
const base = MODEL
  ? fs.readFileSync(arg('source', ''), 'utf8').slice(0, Number(arg('chars', '4600')))
  : await baseText(page, SIZE - 8);
await page.locator('#text').fill(base);
await settled(page, 600_000);
await page.locator('#text').press('End');
const cdp = await page.context().newCDPSession(page);
const events = [];
cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
await cdp.send('Tracing.start', {
  traceConfig: {
    includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'v8.execute', 'blink', 'cc', 'gpu', 'viz', 'disabled-by-default-devtools.timeline.frame', 'benchmark', 'input', 'scheduler'],
  },
  transferMode: 'ReportEvents',
});
const log = [];
for (let i = 0; i < SAMPLES; i++) {
  await page.keyboard.type(TYPED[i % TYPED.length]);
  log.push(await settled(page));
  await page.waitForTimeout(60);
}
await cdp.send('Tracing.end');
await done;
fs.writeFileSync(OUT, JSON.stringify({ traceEvents: events }));
await app.close();

// threads
const names = new Map();
for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
const key = (e) => `${e.pid}:${e.tid}`;
const main = [...names].find(([, n]) => n === 'CrRendererMain')?.[0];
const worker = [...names].filter(([, n]) => /Worker/.test(n)).map(([k]) => k);
const complete = events.filter((e) => e.ph === 'X' && e.dur !== undefined);
const mainTasks = complete.filter((e) => key(e) === main && (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask'));
const onMain = complete.filter((e) => key(e) === main);
// the worker's message handling (the forward)
const wTasks = complete.filter((e) => worker.includes(key(e)) && e.name === 'HandlePostMessage').sort((a, b) => a.ts - b.ts);
// the page's message handlers: EventDispatch of type 'message' on main
const msgs = onMain.filter((e) => e.name === 'HandlePostMessage').sort((a, b) => a.ts - b.ts);
const inputs = onMain.filter((e) => e.name === 'EventDispatch' && e.args?.data?.type === 'input').sort((a, b) => a.ts - b.ts);
console.log(`threads: main ${main} workers ${worker.join(',')}; ${inputs.length} input events, ${msgs.length} message events, ${wTasks.length} worker tasks`);
const inner = (t) => onMain.filter((e) => e.ts >= t.ts && e.ts < t.ts + t.dur && e !== t && e.dur > 300).map((e) => `${e.name}${e.args?.data?.type ? ':' + e.args.data.type : ''} ${(e.dur / 1000).toFixed(1)}`).slice(0, 8);
// per keystroke: the main thread's time by kind, from the input to the painted frame
const sum = {};
const kinds = { Paint: /^Paint$/, Layout: /^Layout$/, 'Script (FunctionCall)': /^FunctionCall$/, 'Canvas FinalizeFrame': /FinalizeFrame/, 'Frames (BeginMainFrame)': /^ProxyMain::BeginMainFrame$/, 'PrePaint': /^PrePaint$/, 'Commit': /^Commit$/ };
for (const [i, inp] of inputs.entries()) {
  const end = inp.ts + log[i].latencyMs * 1000;
  for (const [k, re] of Object.entries(kinds)) {
    const top = onMain.filter((e) => re.test(e.name) && e.ts >= inp.ts && e.ts < end);
    // outermost only
    const outer = top.filter((e) => !top.some((o) => o !== e && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur));
    (sum[k] ??= []).push(outer.reduce((a, e) => a + e.dur, 0) / 1000);
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`median per keystroke: latency ${med(log.map((l) => l.latencyMs)).toFixed(1)} ms, forward ${med(log.map((l) => l.forwardMs)).toFixed(1)}, worker ${med(log.map((l) => l.engineMs ?? NaN)).toFixed(1)}; main thread: ` +
  Object.entries(sum).map(([k, v]) => `${k} ${med(v).toFixed(1)}`).join(', '));
// Chromium's own tasks per keystroke by task type (e.g. autofill's): tasks that start after the
// input event (the task that dispatched the input itself is not counted); and how long the
// worker's answer took from the end of the worker's task to the start of the page's handler
// (the hop between threads, and mostly the time the main thread was busy)
const byType = {};
for (const [i, inp] of inputs.entries()) {
  const end = inp.ts + log[i].latencyMs * 1000;
  const per = {};
  for (const t of mainTasks.filter((t) => t.name === 'ThreadControllerImpl::RunTask' && t.ts >= inp.ts && t.ts < end)) {
    const type = t.args?.renderer_main_thread_task_execution?.task_type ?? '?';
    per[type] = (per[type] ?? 0) + t.dur / 1000;
  }
  for (const [k, v] of Object.entries(per)) (byType[k] ??= []).push(v);
}
console.log('main-thread task time per keystroke by type, median over the keystrokes that had it (count): ' +
  Object.entries(byType).sort((a, b) => med(b[1]) - med(a[1])).slice(0, 8).map(([k, v]) => `${k.replace('TASK_TYPE_', '')} ${med(v).toFixed(1)} ms (${v.length})`).join(', '));
const waits = inputs.map((inp) => {
  const msg = msgs.find((m) => m.ts > inp.ts);
  const w = msg && wTasks.filter((t) => t.ts + t.dur <= msg.ts && t.ts > inp.ts).at(-1);
  return w ? (msg.ts - w.ts - w.dur) / 1000 : NaN;
}).filter((x) => !Number.isNaN(x));
if (waits.length) {
  console.log(`the worker's answer waited (worker task's end → the page's handler): median ${med(waits).toFixed(1)} ms, max ${Math.max(...waits).toFixed(1)} ms (${waits.length} keystrokes)`);
} else {
  console.log("the worker's answer: no keystroke had a worker task before its message (is the CPU backend on?)");
}
if (process.argv.includes('--quiet')) process.exit(0);
for (const inp of inputs) {
  const msg = msgs.find((m) => m.ts > inp.ts);
  if (!msg) continue;
  // the worker task that ended last before the message was handled
  const w = wTasks.filter((t) => t.ts + t.dur <= msg.ts && t.ts > inp.ts).at(-1);
  const wEnd = w ? w.ts + w.dur : NaN;
  const between = mainTasks.filter((t) => t.ts + t.dur > wEnd && t.ts < msg.ts);
  console.log(`input@${((inp.ts - inputs[0].ts) / 1000).toFixed(1)} worker task ${w ? ((w.ts - inp.ts) / 1000).toFixed(1) + '+' + (w.dur / 1000).toFixed(1) : '?'} ms; message handled ${((msg.ts - inp.ts) / 1000).toFixed(1)} ms after input, ${((msg.ts - wEnd) / 1000).toFixed(1)} after the worker's end`);
  for (const t of between) console.log(`   main task @${((t.ts - inp.ts) / 1000).toFixed(1)} ${(t.dur / 1000).toFixed(1)} ms: ${inner(t).join(' | ')}`);
}
