// Runs a wasm32-wasip1 program under Node's WASI with the current folder readable:
//   node wasi.mjs PROGRAM.wasm [ARGS…]
import fs from 'node:fs';
import { WASI } from 'node:wasi';

const [program, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: [program, ...args], preopens: { '.': '.' } });
const module = await WebAssembly.compile(fs.readFileSync(program));
wasi.start(await WebAssembly.instantiate(module, wasi.getImportObject()));
