// Starts the app: keeps an offline copy first where the browser can (the service worker,
// sw.js), then loads the app's WebAssembly (built by Trunk with stable file names). A
// separate file, so the Content-Security-Policy needs no inline script.
//
// The page's state of the offline copy is on <html data-offline>: "ready" once every file is
// kept (later visits work with the network off), "unavailable" where the browser has no
// service workers or refused one, "update" while a new build waits; the waiting update shows
// a notice whose Reload button lets it take over.

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
  const controlled = !!sw.controller;
  // an update waits until the user reloads: a tab running this build never gets the next one's files
  const offer = (waiting) => {
    root.dataset.offline = 'update';
    notice('update-notice', say('새 버전을 설치했습니다. 다시 불러오면 새 버전을 씁니다.', 'A new version of attnlab was installed; reload to use it.'), {
      label: say('다시 불러오기', 'Reload'),
      run: () => {
        sw.addEventListener('controllerchange', () => location.reload(), { once: true });
        waiting.postMessage({ type: 'skip-waiting' });
      },
    });
  };
  sw.addEventListener('message', (e) => {
    if (e.data?.type !== 'offline') return;
    root.dataset.offline = e.data.error ? 'partial' : 'ready';
    root.dataset.offlineBytes = String(e.data.bytes);
    root.dataset.offlineBuild = e.data.build;
  });
  let reg;
  try {
    reg = await sw.register('./sw.js');
  } catch (e) {
    root.dataset.offline = 'unavailable';
    console.warn('attnlab: no offline copy (the service worker was refused):', e);
    return;
  }
  const watch = (w) => {
    if (!w) return;
    const ready = () => w.state === 'installed' && controlled && offer(w);
    if (w.state === 'installed') ready();
    else w.addEventListener('statechange', ready);
  };
  watch(reg.waiting ?? reg.installing);
  reg.addEventListener('updatefound', () => watch(reg.installing));
  // a first visit: let the worker take the page before the app loads (a reload that bypassed
  // an active worker, Shift+Reload, has nothing to wait for)
  if (!controlled && !(reg.active && !reg.installing && !reg.waiting)) {
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
