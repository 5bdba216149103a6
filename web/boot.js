// Loads the app's WebAssembly (built by Trunk with stable file names). A separate file, so
// the Content-Security-Policy needs no inline script.
import init from './attnlab-app.js';

init({ module_or_path: new URL('attnlab-app_bg.wasm', import.meta.url) }).catch((e) => {
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.className = 'error';
  p.textContent = 'attnlab could not start / 시작하지 못했습니다: ' + e;
  document.body.append(p);
});
