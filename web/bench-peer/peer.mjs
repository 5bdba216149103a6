// The onnxruntime-web side of the race (served at /peer/peer.mjs; onnxruntime-web's dist/ at
// /ort/, the exported model at /onnx/). bench-peer.mjs drives it with page.evaluate:
//
//   await window.__peer.init({ bundle: 'wasm' | 'webgpu' | 'all', ep: 'wasm' | 'webgpu',
//                              model: '/onnx/model.onnx', numThreads: 1 })   → what ORT reports
//   await window.__peer.run({ ids: [..], warmup: 3, n: 20 })                 → { ms, last, dims }
//
// `bundle` picks the onnxruntime-web build: `wasm` = ort.wasm.min.mjs (CPU only, plain
// ort-wasm-simd-threaded.wasm), `webgpu` = ort.webgpu.min.mjs (the native WebGPU EP, asyncify
// build), `all` = ort.all.min.mjs (the JS WebGPU EP, "JSEP"). One page holds one session.

const BUNDLES = { wasm: 'ort.wasm.min.mjs', webgpu: 'ort.webgpu.min.mjs', all: 'ort.all.min.mjs' };
const ORT_DIR = new URL('../ort/', location.href).href;

let ort = null;
let session = null;
// what the page printed on its console (onnxruntime-web's warnings land here)
const consoleLog = [];
for (const level of ['warn', 'error']) {
  const orig = console[level].bind(console);
  console[level] = (...a) => {
    consoleLog.push(`${level}: ${a.map(String).join(' ')}`.replace(/\x1b\[[0-9;]*m/g, '').slice(0, 500));
    orig(...a);
  };
}

async function adapterInfo() {
  if (!navigator.gpu) return { error: 'navigator.gpu is undefined' };
  const a = await navigator.gpu.requestAdapter();
  if (!a) return { error: 'navigator.gpu.requestAdapter() returned null' };
  const i = a.info ?? {};
  return {
    vendor: i.vendor,
    architecture: i.architecture,
    device: i.device,
    description: i.description,
    isFallbackAdapter: i.isFallbackAdapter ?? a.isFallbackAdapter ?? null,
  };
}

window.__peer = {
  consoleLog,

  async init({ bundle, ep, model, numThreads = 1 }) {
    if (!BUNDLES[bundle]) throw new Error(`unknown bundle ${bundle}`);
    ort = await import(ORT_DIR + BUNDLES[bundle]);
    // every file from this origin: the .mjs glue and the .wasm next to the bundle
    ort.env.wasm.wasmPaths = ORT_DIR;
    ort.env.wasm.numThreads = numThreads;
    ort.env.wasm.proxy = false; // session.run on this page's thread (no proxy worker)
    ort.env.logLevel = 'warning';
    const adapter = ep === 'webgpu' ? await adapterInfo() : null;
    const t0 = performance.now();
    session = await ort.InferenceSession.create(model, {
      executionProviders: [ep],
      graphOptimizationLevel: 'all',
    });
    const createMs = performance.now() - t0;
    return {
      bundle: BUNDLES[bundle],
      ep,
      versions: { ...ort.env.versions },
      numThreadsRequested: numThreads,
      // onnxruntime-web lowers it to 1 (with a console warning) where threads cannot work
      numThreadsAfterInit: ort.env.wasm.numThreads,
      crossOriginIsolated: self.crossOriginIsolated,
      sharedArrayBuffer: typeof SharedArrayBuffer !== 'undefined',
      hardwareConcurrency: navigator.hardwareConcurrency,
      proxy: ort.env.wasm.proxy,
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      createMs,
      adapter,
    };
  },

  /** `warmup` runs, then `n` timed runs of the same ids; the last run's last logits row. */
  async run({ ids, warmup = 3, n = 20 }) {
    if (!session) throw new Error('init first');
    const t = ids.length;
    const input = new ort.Tensor('int64', BigInt64Array.from(ids, (x) => BigInt(x)), [1, t]);
    const feeds = { [session.inputNames[0]]: input };
    const out = session.outputNames[0];
    let r = null;
    for (let i = 0; i < warmup; i++) r = await session.run(feeds);
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      r = await session.run(feeds);
      ms.push(performance.now() - t0);
    }
    const logits = r[out];
    const dims = logits.dims.map(Number);
    const v = dims[dims.length - 1];
    const data = logits.data; // Float32Array on the CPU (the default output location)
    const last = Array.from(data.subarray((t - 1) * v, t * v));
    return { ms, last, dims, location: logits.location, type: logits.type };
  },
};
window.__peerReady = true;
