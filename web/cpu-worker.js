// The CPU engine's Web Worker (a classic worker): loads the wasm-bindgen output of the
// `attnlab-worker` binary (built by Trunk with data-type="worker") and starts it. Messages
// that arrive while the wasm is still loading are kept and handed to it once it runs; a
// worker that cannot start throws, which the page sees as the worker's `error` event.
const early = [];
self.onmessage = (e) => early.push(e);
importScripts('./attnlab-worker.js');
wasm_bindgen({ module_or_path: './attnlab-worker_bg.wasm' }).then(
  (wasm) => {
    // its memory, for the benchmarks' measure of the worker's size (web/e2e/bench.mjs)
    self.__attnlabMemory = wasm.memory;
    // the wasm's start function has put its own handler in place
    for (const e of early.splice(0)) self.onmessage(e);
  },
  (e) => {
    setTimeout(() => {
      throw new Error(`the CPU worker could not start: ${e}`);
    });
  },
);
