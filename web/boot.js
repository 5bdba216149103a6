// Starts the app: keeps an offline copy first where the browser can (the service worker,
// sw.js), then loads the app's WebAssembly (built by Trunk with stable file names). A
// separate file, so the Content-Security-Policy needs no inline script.
//
// The page's state of the offline copy is on <html data-offline>: "ready" once every file is
// kept (later visits work with the network off), "unavailable" where the browser has no
// service workers or refused one; an installed update shows a notice with a reload button.

const say = (ko, en) => ((document.documentElement.lang || navigator.language || '').startsWith('ko') ? ko : en);

function notice(id, text, action) {
  if (document.getElementById(id)) return;
  const p = document.createElement('div');
  p.id = id;
  p.className = 'notice update-notice';
  p.setAttribute('role', 'status');
  p.textContent = text + ' ';
  if (action) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = action.label;
    b.addEventListener('click', action.run);
    p.append(b);
  }
  // beside the app's root, not in it (the app owns what it renders)
  document.body.append(p);
}

/** Registers the worker; on a first visit waits (briefly) until it controls the page, so that
 * the app's own downloads are kept as they arrive instead of being fetched twice. */
async function offlineCopy() {
  const root = document.documentElement;
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    root.dataset.offline = 'unavailable';
    return;
  }
  const sw = navigator.serviceWorker;
  let controlled = !!sw.controller;
  sw.addEventListener('controllerchange', () => {
    if (controlled) {
      // a new build took over: this page still runs the old one until reloaded
      root.dataset.offline = 'updated';
      notice('update-notice', say('새 버전을 설치했습니다. 다시 불러오면 새 버전을 씁니다.', 'A new version of attnlab was installed; reload to use it.'), {
        label: say('다시 불러오기', 'Reload'),
        run: () => location.reload(),
      });
    }
    controlled = true;
  });
  sw.addEventListener('message', (e) => {
    if (e.data?.type !== 'offline') return;
    root.dataset.offline = e.data.error ? 'partial' : 'ready';
    root.dataset.offlineBytes = String(e.data.bytes);
    root.dataset.offlineBuild = e.data.build;
  });
  try {
    await sw.register('./sw.js');
  } catch (e) {
    root.dataset.offline = 'unavailable';
    console.warn('attnlab: no offline copy (the service worker was refused):', e);
    return;
  }
  if (!controlled) {
    await Promise.race([
      new Promise((r) => sw.addEventListener('controllerchange', r, { once: true })),
      new Promise((r) => setTimeout(r, 4000)),
    ]);
  }
  // once the first result is painted, everything the page did not load itself is kept too
  document.addEventListener(
    'attnlab-painted',
    () => navigator.serviceWorker.controller?.postMessage({ type: 'complete' }),
    { once: true },
  );
}

async function start() {
  await offlineCopy().catch(() => {});
  const { default: init } = await import('./attnlab-app.js');
  await init({ module_or_path: new URL('attnlab-app_bg.wasm', import.meta.url) });
}

start().catch((e) => {
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.className = 'error';
  p.textContent = 'attnlab could not start / 시작하지 못했습니다: ' + e;
  document.body.append(p);
});
