// attnlab vs onnxruntime-web, in the same headless Chromium, on the same model and the same
// token ids (see README.md next to this file).
//
//   node web/bench-peer/bench-peer.mjs [--samples 20] [--warmup 3] [--sizes 16,64,128]
//        [--model assets/model | --model smollm2] [--backends cpu,webgpu]
//        [--ort-webgpu-bundle webgpu|all] [--reexport] [--dry-run]
//
// 1. exports the model to ONNX (tools/onnx/export.py, with target/onnx-venv's python) into
//    target/bench-peer/model.onnx; with `--model smollm2`, SmolLM2-135M-Instruct's GGUF file
//    (the one the serve and test commands fetch into target/models and serve in dist/models)
//    through tools/onnx/export_llama.py (gguf-py dequantizes it to f32) into
//    target/bench-peer/smollm2.onnx, and the app opens it with `model=smollm2`;
// 2. picks, per size T, a text of exactly T tokens (the CLI's tokenization) from a Korean and
//    English paragraph like the lesson's, plus variants of it whose first token differs (so the
//    app reuses nothing) and a text of T − 1 tokens with a character that makes it T (the
//    app's incremental path); onnxruntime-web gets the CLI's ids of the T-token text;
// 3. serves dist/, this folder's page, onnxruntime-web's dist/ and the .onnx from one local
//    server, and blocks (and reports) any request that goes elsewhere;
// 4. per backend — `cpu`: a browser without WebGPU, ORT-web's wasm EP vs the app at
//    `#backend=cpu` (its Web Worker); `webgpu`: a browser with --enable-unsafe-webgpu, ORT-web's
//    WebGPU EP vs the app at `#backend=webgpu` — runs ORT-web (warm-up, then --samples timed
//    session.run calls of the T ids) and the app (warm-up, then --samples full forwards, each
//    a text whose first token differs from the previous one's, interleaved with --samples
//    incremental ones, one character typed at the end);
// 5. compares ORT-web's last-position logits with the CLI's (`trace --full`) for the same ids
//    (max |Δ| ≤ 1e-3, per backend), prints a markdown table and writes
//    target/bench-peer/results.json (and results.md).
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CHROMIUM, launch } from '../e2e/browser.mjs';
import { servedModelPainted } from '../e2e/common.mjs';
import { serveMany } from '../e2e/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const flag = (name) => process.argv.includes(`--${name}`);
const SAMPLES = Number(arg('samples', '20'));
const WARMUP = Number(arg('warmup', '3'));
const SIZES = arg('sizes', '16,64,128').split(',').map(Number);
const MODEL_ARG = arg('model', 'assets/model');
// the real model the app serves in models/ (see web/served-models.mjs)
const SMOLLM2 = MODEL_ARG === 'smollm2';
const SMOLLM2_FILE = 'SmolLM2-135M-Instruct.Q4_1.gguf';
const BACKENDS = arg('backends', 'cpu,webgpu').split(',');
const ORT_WEBGPU_BUNDLE = arg('ort-webgpu-bundle', 'webgpu');
// attnlab's CPU engine is one wasm thread in a Web Worker; ORT-web gets one thread too
const NUM_THREADS = 1;
const TOL = 1e-3;

const TARGET = process.env.CARGO_TARGET_DIR ?? path.join(ROOT, 'target');
const DIST = process.env.ATTNLAB_DIST ?? path.join(ROOT, 'dist');
const CLI = process.env.ATTNLAB_CLI ?? path.join(TARGET, 'debug', 'attnlab');
const PY = process.env.BENCH_PEER_PYTHON ?? path.join(TARGET, 'onnx-venv', 'bin', 'python3');
const OUT = path.join(TARGET, 'bench-peer');
const MODEL = SMOLLM2 ? path.join(TARGET, 'models', SMOLLM2_FILE) : path.resolve(ROOT, MODEL_ARG);
const ONNX = path.join(OUT, SMOLLM2 ? 'smollm2.onnx' : 'model.onnx');
const ORT_DIST = path.join(HERE, 'node_modules', 'onnxruntime-web', 'dist');
const EXPORT_PY = path.join(ROOT, 'tools', 'onnx', 'export.py');
const EXPORT_LLAMA_PY = path.join(ROOT, 'tools', 'onnx', 'export_llama.py');
// the positions export_llama.py's graph takes (its causal mask and RoPE tables)
const LLAMA_POSITIONS = 1024;
// a real model is ≈ 30× the bundled one's work: every wait is this many times longer
const SLOW = SMOLLM2 ? 10 : 1;

// Korean and English, like the lesson (web/e2e/bench.mjs's text, one more sentence): > 128 tokens
const SOURCE =
  '나는 어제 산 커피를 오늘 마셨다. Which do you like better, coffee or tea? ' +
  '그는 아침마다 도서관에 가서 책을 읽었다. The model looks at every earlier word at once. ' +
  '우리는 주말에 공원에서 친구들과 점심을 먹었다. Attention weights in each row sum to one. ' +
  '동생은 학교에서 돌아오자마자 숙제를 끝냈다. She bought a new notebook and wrote down her plans. ' +
  '비가 와서 우리는 집에서 영화를 보기로 했다. 내일은 친구와 함께 시장에 갈 것이다.';
// SmolLM2 is an English model, and its byte-level tokens split a Hangul syllable into pieces
// (no prefix of SOURCE is exactly 63 of its tokens): English, starting with the lesson's question
const SOURCE_EN =
  'Which do you like better, coffee or tea? I bought coffee yesterday and drank it this morning. ' +
  'Every morning he went to the library and read a book before work. The model looks at every ' +
  'earlier word at once. We had lunch with our friends in the park at the weekend. Attention ' +
  'weights in each row sum to one. My brother finished his homework as soon as he came back from ' +
  'school. She bought a new notebook and wrote down her plans for the year. It was raining, so we ' +
  'decided to stay at home and watch a film. Tomorrow I will go to the market with a friend. ' +
  'The small cafe on the corner sells fresh bread, and the smell fills the whole street. Our ' +
  'teacher asked us to read the first chapter again and to write down one question about it.';
// first syllables (first words, in English) for the full-forward variants: the first token
// must change
const FIRST = SMOLLM2 ? ['What', 'Who', 'How', 'Why', 'Where', 'When'] : [...'너저우그내제누이아오하다가소모바'];
// characters to append for the incremental samples (tried in this order, after SOURCE's next one)
const APPEND = [...' .a가!'];

const QUERY = SMOLLM2
  ? { cpu: '#backend=cpu&model=smollm2', webgpu: '#backend=webgpu&model=smollm2' }
  : { cpu: '#backend=cpu', webgpu: '#backend=webgpu' };
const ORT_SETUP = {
  cpu: { bundle: 'wasm', ep: 'wasm' },
  webgpu: { bundle: ORT_WEBGPU_BUNDLE, ep: 'webgpu' },
};

function fail(msg) {
  console.error(`bench-peer: ${msg}`);
  process.exit(2);
}

const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stats = (xs) => ({
  median: median(xs),
  min: xs.length ? Math.min(...xs) : NaN,
  max: xs.length ? Math.max(...xs) : NaN,
  n: xs.length,
  all: xs,
});
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const sci = (x) => (Number.isFinite(x) ? x.toExponential(2) : '—');
const log = (s) => process.stderr.write(`${s}\n`);

/** Rejects after `ms` (a stuck page must not hang the harness). */
const within = (p, ms, what) =>
  Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`${what}: no answer in ${ms / 1000} s`)), ms).unref())]);

// ---------------------------------------------------------------------------------------------
// setup checks

if (!fs.existsSync(path.join(DIST, 'index.html'))) fail(`${DIST}/index.html is missing: run \`trunk build --release\` first`);
if (!fs.existsSync(CLI)) fail(`the attnlab CLI is missing at ${CLI} (cargo build -p attnlab-cli, or set ATTNLAB_CLI)`);
if (!fs.existsSync(PY)) fail(`no python at ${PY} (a venv with tools/onnx/requirements.txt; or set BENCH_PEER_PYTHON)`);
if (!fs.existsSync(path.join(ORT_DIST, 'ort.wasm.min.mjs'))) fail(`onnxruntime-web is not installed: cd web/bench-peer && npm install`);
if (!['webgpu', 'all'].includes(ORT_WEBGPU_BUNDLE)) fail('--ort-webgpu-bundle is webgpu or all');
for (const b of BACKENDS) if (!QUERY[b]) fail(`unknown backend ${b} (cpu, webgpu)`);
if (!(SAMPLES >= 1) || !(WARMUP >= 0)) fail('--samples ≥ 1, --warmup ≥ 0');

// the app serves dist/model (or dist/models/ the real model): it must be the model given here
const sha = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
const SERVED = SMOLLM2
  ? [[MODEL, path.join(DIST, 'models', SMOLLM2_FILE)]]
  : ['config.json', 'model.safetensors', 'tokenizer.json'].map((f) => [path.join(MODEL, f), path.join(DIST, 'model', f)]);
for (const [a, b] of SERVED) {
  if (!fs.existsSync(a)) fail(`${a} is missing${SMOLLM2 ? ' (scripts/lib.sh ensure_smollm2 fetches it)' : ''}`);
  if (!fs.existsSync(b) || sha(a) !== sha(b)) {
    fail(`the app serves ${b}, which is not ${a}: rebuild dist/${SMOLLM2 ? '' : ` or pass --model ${path.relative(ROOT, path.join(DIST, 'model'))}`}`);
  }
}
// the positions both sides take, and the vocabulary (for the engine alone's changed first id)
const CONTEXT = SMOLLM2 ? LLAMA_POSITIONS : JSON.parse(fs.readFileSync(path.join(MODEL, 'config.json'), 'utf8')).n_positions;
for (const t of SIZES) {
  if (!(Number.isInteger(t) && t >= 2 && t <= CONTEXT)) fail(`size ${t} is not in 2..${CONTEXT} (the context)`);
}

fs.mkdirSync(OUT, { recursive: true });

// ---------------------------------------------------------------------------------------------
// 2. texts and ids, from the CLI's tokenization

const cliOut = (args) =>
  execFileSync(CLI, ['--model', MODEL, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
const counted = new Map();
// the model's vocabulary, as the CLI reports it
let VOCAB = null;
/** { count (before any drop), ids, dropped } of `text` as the CLI (and the app) tokenize it. */
function tok(text) {
  if (!counted.has(text)) {
    const j = JSON.parse(cliOut(['trace', text, '--format', 'json', '--layer', '0', '--head', '0']));
    counted.set(text, { count: j.dims.t + j.dropped, dropped: j.dropped, ids: j.tokens.map((t) => t.id) });
    VOCAB = j.dims.vocab;
  }
  return counted.get(text);
}

const CHARS = [...(SMOLLM2 ? SOURCE_EN : SOURCE)];
/** A prefix of SOURCE (in characters) that is exactly `n` tokens, ending at a word if it can. */
function prefixOf(n) {
  let lo = 1;
  let hi = CHARS.length;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (tok(CHARS.slice(0, mid).join('')).count <= n) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // prefer a cut before a space (a whole last word), else the longest
  let found = null;
  for (let len = best; len > 0 && len > best - 16; len--) {
    const text = CHARS.slice(0, len).join('');
    if (tok(text).count !== n) continue;
    found ??= { text, len };
    if (CHARS[len] === ' ' && CHARS[len - 1] !== ' ') return { text, len };
  }
  if (found) return found;
  throw new Error(`no prefix of the source text is exactly ${n} tokens`);
}

function textsFor(t) {
  const base = prefixOf(t);
  const baseTok = tok(base.text);
  // full-forward texts: the base and variants whose first token differs from each other's
  const pool = [{ text: base.text, first: baseTok.ids[0] }];
  const rest = SMOLLM2 ? base.text.slice(base.text.indexOf(' ')) : [...base.text].slice(1).join('');
  for (const c of FIRST) {
    if (pool.length >= 4) break;
    const text = c + rest;
    const k = tok(text);
    if (k.count === t && !pool.some((p) => p.first === k.ids[0])) pool.push({ text, first: k.ids[0] });
  }
  if (pool.length < 2) throw new Error(`T=${t}: found no variant of the text with another first token`);
  // incremental: T − 1 tokens, then one character that makes it T
  const inc = prefixOf(t - 1);
  const incFirst = tok(inc.text).ids[0];
  let append = null;
  for (const ch of [CHARS[inc.len], ...APPEND].filter(Boolean)) {
    const k = tok(inc.text + ch);
    if (k.count === t && k.dropped === 0) {
      append = ch;
      break;
    }
  }
  if (append === null) throw new Error(`T=${t}: no character makes the ${t - 1}-token text ${t} tokens`);
  return { t, base: base.text, ids: baseTok.ids, pool, inc: { text: inc.text, first: incFirst, append } };
}

/**
 * What ORT-web's last-position logits are checked against. The bundled model: the CLI's
 * logits (`trace --full`), with the ids it ran. A real model's whole trace is too large for
 * JSON (1.4 GB at 128 tokens of SmolLM2): the CLI's 50 likeliest next tokens
 * (`predict --top 50`), compared as log-probabilities (the logits up to their log-sum-exp).
 */
function cliReference(text) {
  if (SMOLLM2) {
    const j = JSON.parse(cliOut(['predict', text, '--top', '50', '--format', 'json']));
    return { ids: tok(text).ids, dropped: j.dropped, top: j.next.map((n) => ({ id: n.id, logp: Math.log(n.prob) })) };
  }
  const j = JSON.parse(cliOut(['trace', text, '--format', 'json', '--full']));
  const tr = j.trace;
  const { t, vocab } = tr.dims;
  const flat = Array.isArray(tr.logits[0]) ? tr.logits.flat(Infinity) : tr.logits;
  if (flat.length !== t * vocab) throw new Error(`CLI logits: ${flat.length} values for T=${t}, V=${vocab}`);
  return { ids: tr.tokens, dropped: tr.dropped, last: flat.slice((t - 1) * vocab, t * vocab) };
}

log('choosing texts with the CLI’s tokenization …');
const TEXTS = SIZES.map(textsFor);
const REFS = new Map();
for (const x of TEXTS) {
  const ref = cliReference(x.base);
  if (ref.dropped !== 0 || ref.ids.length !== x.t || ref.ids.some((id, i) => id !== x.ids[i])) {
    fail(`T=${x.t}: the CLI's --full trace ran other ids than its tokenization`);
  }
  REFS.set(x.t, ref);
  log(`  T=${x.t}: ${JSON.stringify(x.base.slice(0, 40))}… (${x.pool.length} full texts; incremental: ${x.t - 1} tokens + ${JSON.stringify(x.inc.append)})`);
}

if (flag('dry-run')) {
  // the texts and ids only (no export, no browser)
  console.log(JSON.stringify(TEXTS.map((x) => ({ t: x.t, base: x.base, ids: x.ids, full: x.pool.map((p) => p.text), incremental: x.inc })), null, 2));
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// 1. the ONNX export (again only when the model or the exporter is newer)

const mtime = (f) => fs.statSync(f).mtimeMs;
const sources = SMOLLM2 ? [EXPORT_PY, EXPORT_LLAMA_PY, MODEL] : [EXPORT_PY, ...['config.json', 'model.safetensors'].map((f) => path.join(MODEL, f))];
const stale =
  flag('reexport') ||
  !fs.existsSync(ONNX) ||
  sources.some((f) => mtime(f) > mtime(ONNX)) ||
  !fs.existsSync(ONNX + '.source') ||
  fs.readFileSync(ONNX + '.source', 'utf8') !== MODEL;
if (stale) {
  log(`exporting ${path.relative(ROOT, MODEL)} → ${path.relative(ROOT, ONNX)}`);
  const exporter = SMOLLM2 ? [EXPORT_LLAMA_PY, MODEL, ONNX, '--max-positions', String(LLAMA_POSITIONS)] : [EXPORT_PY, MODEL, ONNX];
  const r = spawnSync(PY, exporter, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) fail(`${path.basename(exporter[0])} exited ${r.status}: ${r.stderr || r.stdout}`);
  log(r.stdout.trim());
  fs.writeFileSync(ONNX + '.source', MODEL);
} else {
  log(`${path.relative(ROOT, ONNX)} is up to date (--reexport to redo it)`);
}

// ---------------------------------------------------------------------------------------------
// 3. one local server; 4. the runs

const srv = await serveMany({
  '/': DIST,
  '/peer/': { dir: HERE, only: ['peer.html', 'peer.mjs'] },
  '/ort/': ORT_DIST,
  '/onnx/': { dir: OUT, only: [path.basename(ONNX)] },
});
const external = [];

/** Lets requests to the local server through and blocks (and records) the rest. */
async function guard(context) {
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(srv.url) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    external.push(u);
    return route.abort();
  });
}

function watch(page) {
  const messages = [];
  page.on('pageerror', (e) => messages.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // (onnxruntime's own log lines come with terminal colours)
    if (m.type() === 'error' || m.type() === 'warning') messages.push(`${m.type()}: ${m.text().replace(/\x1b\[[0-9;]*m/g, '')}`.slice(0, 500));
  });
  return messages;
}

async function runOrt(context, backend) {
  const { bundle, ep } = ORT_SETUP[backend];
  const page = await context.newPage();
  const messages = watch(page);
  const out = { bundle, ep, info: null, error: null, rows: {}, messages };
  try {
    await page.goto(`${srv.url}peer/peer.html`);
    await page.waitForFunction(() => window.__peerReady, null, { timeout: 60_000 });
    out.info = await within(
      page.evaluate((a) => window.__peer.init(a), { bundle, ep, model: `/onnx/${path.basename(ONNX)}`, numThreads: NUM_THREADS }),
      180_000 * SLOW,
      `ORT-web ${ep} init`,
    );
    log(`  ORT-web ${out.info.versions.web} ${out.info.bundle} ep=${ep}: numThreads ${out.info.numThreadsRequested} → ${out.info.numThreadsAfterInit}, crossOriginIsolated ${out.info.crossOriginIsolated}, session ${fmt(out.info.createMs)} ms`);
    for (const x of TEXTS) {
      try {
        const r = await within(
          page.evaluate((a) => window.__peer.run(a), { ids: x.ids, warmup: WARMUP, n: SAMPLES }),
          300_000 * SLOW,
          `ORT-web ${ep} T=${x.t}`,
        );
        const { worst, at, argmaxSame } = agreement(r.last, REFS.get(x.t));
        out.rows[x.t] = { ms: stats(r.ms), dims: r.dims, maxAbsDelta: worst, worstId: at, argmaxSame };
        log(`  ORT-web ${ep} T=${x.t}: median ${fmt(median(r.ms), 2)} ms, max |Δ${DELTA} ${sci(worst)}`);
      } catch (e) {
        out.rows[x.t] = { error: String(e.message ?? e) };
        log(`  ORT-web ${ep} T=${x.t}: ${e.message ?? e}`);
      }
    }
    out.pageConsole = await page.evaluate(() => window.__peer.consoleLog).catch(() => []);
  } catch (e) {
    out.error = String(e.message ?? e);
    log(`  ORT-web ${ep}: ${out.error}`);
  } finally {
    await page.close().catch(() => {});
  }
  return out;
}

// what the agreement column compares
const DELTA = SMOLLM2 ? 'log p| (CLI top 50)' : 'logit|';

/** ORT-web's last logits against the CLI's reference: the largest difference, where, and
 * whether both pick the same next token. */
function agreement(last, ref) {
  let worst = 0;
  let at = -1;
  const take = (d, i) => {
    if (Number.isNaN(d)) worst = NaN;
    else if (d > worst && !Number.isNaN(worst)) [worst, at] = [d, i];
  };
  if (ref.top) {
    // log-softmax of ORT's logits at the CLI's top ids
    let m = -Infinity;
    for (const x of last) m = Math.max(m, x);
    let s = 0;
    for (const x of last) s += Math.exp(x - m);
    const lse = m + Math.log(s);
    for (const { id, logp } of ref.top) take(Math.abs(last[id] - lse - logp), id);
    return { worst, at, argmaxSame: argmax(last) === ref.top[0].id };
  }
  if (last.length !== ref.last.length) return { worst: NaN, at, argmaxSame: false };
  for (let i = 0; i < ref.last.length; i++) take(Math.abs(last[i] - ref.last[i]), i);
  return { worst, at, argmaxSame: argmax(last) === argmax(ref.last) };
}

function argmax(xs) {
  let k = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[k]) k = i;
  return k;
}

const painted = (page) => page.evaluate(() => ({ ...window.__attnlab.painted }));
async function settled(page) {
  await page.waitForFunction(
    () => window.__attnlab?.painted?.text === document.querySelector('#text').value,
    null,
    { timeout: 180_000 * SLOW },
  );
  return painted(page);
}

async function runApp(context, backend) {
  const page = await context.newPage();
  const messages = watch(page);
  const out = { query: QUERY[backend], error: null, rows: {}, messages };
  try {
    await page.goto(srv.url + QUERY[backend]);
    await page.waitForFunction(() => window.__attnlab?.painted, null, { timeout: 180_000 });
    // the bundled model paints first; then SmolLM2 loads and paints its first result
    if (SMOLLM2) await servedModelPainted(page, 180_000 * SLOW);
    let last = await painted(page);
    out.firstPainted = { backend: last.backend, forwardMs: last.forwardMs, tokens: last.tokens };
    const box = page.locator('#text');
    // each timed input starts on an idle page, as ORT-web's session.run does: the views that
    // were off screen at the last paint have caught up (else their catch-up shares the two
    // cores with the next forward)
    const idle = () => page.waitForFunction(() => !window.__attnlab.stale, null, { timeout: 60_000 * SLOW });
    // one input event, then the painted result; it must be a new one
    const show = async (text) => {
      await idle();
      await box.fill(text);
      const p = await settled(page);
      if (p.generation === last.generation) throw new Error(`no new result for ${JSON.stringify(text.slice(0, 30))}…`);
      last = p;
      return p;
    };
    const typeAtEnd = async (ch) => {
      await box.press('End');
      await idle();
      await page.keyboard.type(ch);
      const p = await settled(page);
      if (p.generation === last.generation) throw new Error('no new result after typing');
      last = p;
      return p;
    };
    // the first token of the text on screen (a full sample must start with another one)
    let prevFirst = null;
    for (const x of TEXTS) {
      const row = { full: [], inc: [], fullEngine: [], incEngine: [], fullLatency: [], incLatency: [], fullIncremental: 0, incIncremental: 0, tokens: new Set(), ranOn: new Set(), n: 0 };
      let k = 0;
      const nextFull = () => {
        // a text whose first token differs from the one on screen (nothing can be reused)
        for (let tries = 0; tries < x.pool.length; tries++) {
          const cand = x.pool[k++ % x.pool.length];
          if (cand.first !== prevFirst) return cand;
        }
        throw new Error('no full text with another first token');
      };
      const fullSample = async () => {
        const c = nextFull();
        const p = await show(c.text);
        prevFirst = c.first;
        return p;
      };
      const incSample = async () => {
        await show(x.inc.text); // not measured
        prevFirst = x.inc.first;
        return typeAtEnd(x.inc.append);
      };
      try {
        for (let i = 0; i < WARMUP; i++) {
          await fullSample();
          await incSample();
        }
        for (let i = 0; i < SAMPLES; i++) {
          const f = await fullSample();
          row.full.push(f.forwardMs);
          if (typeof f.engineMs === 'number') row.fullEngine.push(f.engineMs);
          row.fullLatency.push(f.latencyMs);
          row.fullIncremental += f.incremental ? 1 : 0;
          const n = await incSample();
          row.inc.push(n.forwardMs);
          if (typeof n.engineMs === 'number') row.incEngine.push(n.engineMs);
          row.incLatency.push(n.latencyMs);
          row.incIncremental += n.incremental ? 1 : 0;
          for (const p of [f, n]) {
            row.tokens.add(p.tokens);
            row.ranOn.add(p.backend);
          }
          row.n++;
        }
        out.rows[x.t] = {
          samples: row.n,
          full: stats(row.full),
          fullEngine: row.fullEngine.length ? stats(row.fullEngine) : null,
          fullLatency: stats(row.fullLatency),
          inc: stats(row.inc),
          incEngine: row.incEngine.length ? stats(row.incEngine) : null,
          incLatency: stats(row.incLatency),
          fullIncremental: row.fullIncremental,
          incIncremental: row.incIncremental,
          tokens: [...row.tokens],
          ranOn: [...row.ranOn],
        };
        const r = out.rows[x.t];
        log(`  attnlab ${backend} T=${x.t}: full ${fmt(r.full.median, 2)} ms${r.fullEngine ? ` (worker ${fmt(r.fullEngine.median, 2)})` : ''}, incremental ${fmt(r.inc.median, 2)} ms, ran on ${r.ranOn.join('/')}, tokens ${r.tokens.join('/')}`);
      } catch (e) {
        out.rows[x.t] = { error: String(e.message ?? e) };
        log(`  attnlab ${backend} T=${x.t}: ${e.message ?? e}`);
      }
    }
  } catch (e) {
    out.error = String(e.message ?? e);
    log(`  attnlab ${backend}: ${out.error}`);
  } finally {
    await page.close().catch(() => {});
  }
  return out;
}

/**
 * attnlab's CPU engine alone, as ORT-web runs: the app's own worker (dist/cpu-worker.js and
 * its wasm) started from a page that shows nothing, sent the same ids as ORT-web. Per T:
 * full forwards (the first id changed each time, so the worker's cache reuses nothing) and
 * incremental ones (T − 1 ids first, not timed, then the T ids), the worker's own clock
 * (`workerMs`) and the round trip the page waits for (post → the transferred trace).
 */
async function runEngineAlone(context) {
  const page = await context.newPage();
  const messages = watch(page);
  const out = { error: null, rows: {}, messages };
  try {
    await page.goto(`${srv.url}peer/peer.html`);
    // what the page would post: the bundled model's two files, or the GGUF file whole
    const load = SMOLLM2
      ? { format: 'gguf', config: null, weights: `/models/${SMOLLM2_FILE}` }
      : { format: 'gpt2', config: '/model/config.json', weights: '/model/model.safetensors' };
    const vocab = VOCAB;
    for (const x of TEXTS) {
      try {
        out.rows[x.t] = await within(
          page.evaluate(
            async ({ ids, warmup, n, vocab, load }) => {
              const bytes = async (f) => (f ? new Uint8Array(await (await fetch(f)).arrayBuffer()) : new Uint8Array(0));
              const worker = new Worker('/cpu-worker.js');
              let spare = null;
              const call = (msg) =>
                new Promise((resolve, reject) => {
                  worker.onmessage = (e) => (e.data.kind === 'error' ? reject(new Error(e.data.message)) : resolve(e.data));
                  worker.onerror = (e) => reject(new Error(e.message));
                  worker.postMessage(msg, spare ? [spare] : []);
                  spare = null;
                });
              await call({ kind: 'load', format: load.format, config: await bytes(load.config), weights: [await bytes(load.weights)] });
              const opts = JSON.stringify({ scale: true, temperature: 1, causal_mask: true, ablate: [] });
              const forward = async (run) => {
                const t0 = performance.now();
                const r = await call({ kind: 'forward', id: 1, ids: Uint32Array.from(run), opts, spare });
                const roundTrip = performance.now() - t0;
                spare = r.data.buffer; // the app hands each buffer back for the next trace
                return { workerMs: r.workerMs, roundTrip, incremental: r.incremental };
              };
              const res = { full: [], fullRound: [], inc: [], incRound: [], fullCameBackIncremental: 0, incNotIncremental: 0 };
              for (let i = 0; i < warmup + n; i++) {
                const f = await forward([(ids[0] + 1 + i) % vocab, ...ids.slice(1)]);
                await forward(ids.slice(0, -1));
                const g = await forward(ids);
                if (i < warmup) continue;
                res.full.push(f.workerMs);
                res.fullRound.push(f.roundTrip);
                res.inc.push(g.workerMs);
                res.incRound.push(g.roundTrip);
                res.fullCameBackIncremental += f.incremental ? 1 : 0;
                res.incNotIncremental += g.incremental ? 0 : 1;
              }
              worker.terminate();
              return res;
            },
            { ids: x.ids, warmup: WARMUP, n: SAMPLES, vocab, load },
          ),
          300_000 * SLOW,
          `attnlab engine alone T=${x.t}`,
        );
        const r = out.rows[x.t];
        for (const k of ['full', 'fullRound', 'inc', 'incRound']) r[k] = stats(r[k]);
        log(`  attnlab engine alone T=${x.t}: full ${fmt(r.full.median, 2)} ms (round trip ${fmt(r.fullRound.median, 2)}), incremental ${fmt(r.inc.median, 2)} ms`);
      } catch (e) {
        out.rows[x.t] = { error: String(e.message ?? e) };
        log(`  attnlab engine alone T=${x.t}: ${e.message ?? e}`);
      }
    }
  } catch (e) {
    out.error = String(e.message ?? e);
  } finally {
    await page.close().catch(() => {});
  }
  return out;
}

const started = Date.now();
const runs = {};
try {
  for (const backend of BACKENDS) {
    log(`${backend}: ${backend === 'webgpu' ? 'Chromium with --enable-unsafe-webgpu' : 'Chromium without WebGPU'}`);
    const { context, close } = await launch({ webgpu: backend === 'webgpu' });
    try {
      await guard(context);
      // one after the other, never at the same time (they would share the cores)
      const ort = await runOrt(context, backend);
      const alone = backend === 'cpu' ? await runEngineAlone(context) : null;
      const app = await runApp(context, backend);
      runs[backend] = { ort, alone, app };
    } finally {
      await close();
    }
  }
} finally {
  await srv.close();
}

// ---------------------------------------------------------------------------------------------
// 5. the report

let chromiumVersion = '';
try {
  chromiumVersion = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
} catch {
  chromiumVersion = CHROMIUM;
}
const ortInfo = Object.values(runs).map((r) => r.ort.info).find(Boolean);
const rows = [];
let bad = 0;
for (const x of TEXTS) {
  for (const backend of BACKENDS) {
    const r = runs[backend];
    const o = r?.ort.rows[x.t] ?? { error: r?.ort.error ?? 'not run' };
    const a = r?.app.rows[x.t] ?? { error: r?.app.error ?? 'not run' };
    const ortMs = o.ms?.median ?? NaN;
    const e = r?.alone ? r.alone.rows[x.t] ?? { error: r.alone.error ?? 'not run' } : null;
    const row = {
      t: x.t,
      backend,
      ortEp: ORT_SETUP[backend].ep,
      ortBundle: r?.ort.info?.bundle ?? null,
      ortMs,
      attnlabFullMs: a.full?.median ?? NaN,
      attnlabFullEngineMs: a.fullEngine?.median ?? null,
      attnlabIncMs: a.inc?.median ?? NaN,
      attnlabIncEngineMs: a.incEngine?.median ?? null,
      ratioFull: (a.full?.median ?? NaN) / ortMs,
      ratioFullEngine: a.fullEngine ? a.fullEngine.median / ortMs : null,
      alone: e && !e.error ? { fullMs: e.full.median, fullRoundTripMs: e.fullRound.median, incMs: e.inc.median, incRoundTripMs: e.incRound.median, ratioFull: e.full.median / ortMs, ratioFullRoundTrip: e.fullRound.median / ortMs, fullCameBackIncremental: e.fullCameBackIncremental, incNotIncremental: e.incNotIncremental } : null,
      aloneError: e?.error ?? null,
      maxAbsDeltaLogit: o.maxAbsDelta ?? NaN,
      argmaxSame: o.argmaxSame ?? null,
      agree: Number.isFinite(o.maxAbsDelta) && o.maxAbsDelta <= TOL,
      attnlabRanOn: a.ranOn ?? null,
      attnlabTokens: a.tokens ?? null,
      attnlabFullCameBackIncremental: a.fullIncremental ?? null,
      attnlabIncCameBackIncremental: a.incIncremental ?? null,
      ortError: o.error ?? null,
      attnlabError: a.error ?? null,
    };
    if (!row.agree || row.ortError || row.attnlabError) bad++;
    rows.push(row);
  }
}

const lines = [];
const adapter = runs.webgpu?.ort.info?.adapter;
lines.push(`attnlab vs onnxruntime-web ${ortInfo?.versions?.web ?? '?'}${SMOLLM2 ? ` on SmolLM2-135M-Instruct (attnlab: the Q4_1 GGUF file, block by block; ORT-web: ${path.basename(ONNX)}, the same weights dequantized to f32 by gguf-py)` : ''}, same Chromium (${chromiumVersion}, headless), same ids (the CLI's tokenization); medians of ${SAMPLES} samples after ${WARMUP} warm-up`);
lines.push('');
lines.push(`| T | backend | ORT-web median (ms) | attnlab full median (ms) | attnlab incremental median (ms) | attnlab / ORT (full) | max \\|Δ${DELTA.replace('|', '\\|')} ORT vs CLI |`);
lines.push('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const cpu = r.attnlabFullEngineMs !== null;
  const be = `${r.backend === 'cpu' ? 'cpu (ORT wasm / attnlab worker)' : `webgpu (ORT ${r.ortBundle ?? r.ortEp} / attnlab)`}${r.attnlabRanOn && r.attnlabRanOn.join('/') !== (r.backend === 'cpu' ? 'cpu' : 'webgpu') ? ` — attnlab ran on ${r.attnlabRanOn.join('/')}` : ''}`;
  const ort = r.ortError ? `error: ${r.ortError.slice(0, 80)}` : fmt(r.ortMs, 2);
  const full = r.attnlabError ? `error: ${r.attnlabError.slice(0, 80)}` : cpu ? `${fmt(r.attnlabFullEngineMs, 2)} worker / ${fmt(r.attnlabFullMs, 2)} with transfer` : fmt(r.attnlabFullMs, 2);
  const inc = r.attnlabError ? '—' : cpu ? `${fmt(r.attnlabIncEngineMs, 2)} worker / ${fmt(r.attnlabIncMs, 2)} with transfer` : fmt(r.attnlabIncMs, 2);
  const ratio = cpu ? `${fmt(r.ratioFullEngine, 2)} worker / ${fmt(r.ratioFull, 2)} with transfer` : fmt(r.ratioFull, 2);
  const delta = `${sci(r.maxAbsDeltaLogit)} ${r.agree ? '✓' : `✗ (> ${TOL})`}`;
  lines.push(`| ${r.t} | ${be} | ${ort} | ${full} | ${inc} | ${ratio} | ${delta} |`);
}
if (rows.some((r) => r.alone || r.aloneError)) {
  lines.push('');
  lines.push('The CPU engines alone (each on a page that shows nothing; attnlab: the app\'s own worker sent the same ids by the page, no views):');
  lines.push('');
  lines.push('| T | ORT-web wasm median (ms) | attnlab worker, full: own clock / round trip (ms) | attnlab worker, incremental: own clock / round trip (ms) | attnlab / ORT (full): own clock / round trip |');
  lines.push('|---|---|---|---|---|');
  for (const r of rows.filter((r) => r.alone || r.aloneError)) {
    const a = r.alone;
    lines.push(a ? `| ${r.t} | ${fmt(r.ortMs, 2)} | ${fmt(a.fullMs, 2)} / ${fmt(a.fullRoundTripMs, 2)} | ${fmt(a.incMs, 2)} / ${fmt(a.incRoundTripMs, 2)} | ${fmt(a.ratioFull, 2)} / ${fmt(a.ratioFullRoundTrip, 2)} |` : `| ${r.t} | ${fmt(r.ortMs, 2)} | error: ${r.aloneError.slice(0, 80)} | — | — |`);
  }
}
lines.push('');
lines.push(`- threads: ORT-web env.wasm.numThreads set to ${NUM_THREADS}; after init it reports ${ortInfo?.numThreadsAfterInit ?? '?'} (crossOriginIsolated ${ortInfo?.crossOriginIsolated ?? '?'}, proxy ${ortInfo?.proxy ?? '?'}: session.run on the page's thread); attnlab's CPU engine: one wasm thread in its Web Worker.`);
lines.push('- ORT-web times one session.run (input → logits [1, T, V] on the CPU); attnlab "full" is a whole forward of T tokens (its first token differs from the previous text\'s) and "incremental" one character typed at the end of T − 1 tokens; attnlab\'s times include reading back the whole trace (every intermediate, for its views), not only the logits. On the CPU, "worker" is the worker\'s own clock, "with transfer" what the page waits for.');
for (const r of rows) {
  if (r.alone?.fullCameBackIncremental) lines.push(`- warning: T=${r.t}: ${r.alone.fullCameBackIncremental} full forwards of the engine alone came back incremental`);
  if (r.alone?.incNotIncremental) lines.push(`- warning: T=${r.t}: ${r.alone.incNotIncremental} incremental forwards of the engine alone were not`);
  if (r.attnlabFullCameBackIncremental) lines.push(`- warning: T=${r.t} ${r.backend}: ${r.attnlabFullCameBackIncremental} "full" samples came back incremental`);
  if (r.attnlabIncCameBackIncremental !== null && r.attnlabIncCameBackIncremental < SAMPLES) lines.push(`- warning: T=${r.t} ${r.backend}: only ${r.attnlabIncCameBackIncremental}/${SAMPLES} "incremental" samples were incremental`);
  if (r.attnlabTokens && (r.attnlabTokens.length !== 1 || r.attnlabTokens[0] !== r.t)) lines.push(`- warning: T=${r.t} ${r.backend}: the app ran ${r.attnlabTokens.join('/')} tokens`);
}
for (const backend of BACKENDS) {
  const m = runs[backend]?.ort.messages ?? [];
  if (m.some((x) => x.includes('not assigned to the preferred execution providers'))) {
    lines.push(`- ORT-web ${ORT_SETUP[backend].ep}: it warned that some nodes were not assigned to the ${ORT_SETUP[backend].ep} EP (run on its CPU kernels; "e.g. shape related ops", it says).`);
  }
}
if (adapter) {
  lines.push(`- WebGPU adapter: ${adapter.error ?? `${[adapter.vendor, adapter.architecture, adapter.device, adapter.description].filter(Boolean).join(' / ')} (isFallbackAdapter ${adapter.isFallbackAdapter})`}.`);
}
lines.push('- SwiftShader (Chromium\'s WebGPU here) and lavapipe are software GPUs running on these CPU cores: read the webgpu rows as ratios between the two runtimes, not as GPU speed.');
lines.push(`- requests outside the local server: ${external.length ? external.join(', ') : 'none'}; ${(Date.now() - started) / 1000 | 0} s in the browser.`);
const report = lines.join('\n');
console.log(report);

const results = {
  date: new Date().toISOString(),
  chromium: chromiumVersion,
  onnxruntimeWeb: ortInfo?.versions ?? null,
  numThreads: { requested: NUM_THREADS, reported: ortInfo?.numThreadsAfterInit ?? null, crossOriginIsolated: ortInfo?.crossOriginIsolated ?? null },
  samples: SAMPLES,
  warmup: WARMUP,
  sizes: SIZES,
  model: path.relative(ROOT, MODEL),
  onnx: { path: path.relative(ROOT, ONNX), bytes: fs.statSync(ONNX).size },
  tolerance: TOL,
  texts: TEXTS.map((x) => ({ t: x.t, base: x.base, ids: x.ids, full: x.pool.map((p) => p.text), incremental: x.inc })),
  rows,
  runs,
  externalRequests: external,
  served: [...new Set(srv.requests)],
  note: 'SwiftShader/lavapipe are software GPUs: webgpu rows are ratios only, not absolute GPU speed',
};
// results.json for the bundled model; results-smollm2-BACKENDS.json for SmolLM2 (whose CPU and
// WebGPU rows are run separately, with fewer samples on the slow software GPU)
const stem = SMOLLM2 ? `results-smollm2-${BACKENDS.join('+')}` : 'results';
fs.writeFileSync(path.join(OUT, `${stem}.json`), JSON.stringify(results, null, 2));
fs.writeFileSync(path.join(OUT, `${stem}.md`), report + '\n');
log(`wrote ${path.relative(ROOT, path.join(OUT, stem))}.json and .md`);
process.exitCode = bad || external.length ? 1 : 0;
