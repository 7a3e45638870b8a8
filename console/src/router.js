// Client-side routes of /app (the server serves index.html for each of these
// paths: api/console/). Pages are loaded on demand, so the first page costs
// only the shell and its own chunk.
export const routes = [
  { path: /^\/app\/?$/, load: () => import('./pages/library.jsx') },
  { path: /^\/app\/search$/, load: () => import('./pages/search.jsx') },
  { path: /^\/app\/record$/, load: () => import('./pages/record.jsx') },
  { path: /^\/app\/transcriptions\/([^/]+)$/, load: () => import('./pages/reader.jsx'), params: (m) => ({ id: m[1] }) },
  {
    path: /^\/app\/account(?:\/(keys|apps|usage|billing))?$/,
    load: () => import('./pages/account.jsx'),
    params: (m) => ({ tab: m[1] || 'overview' }),
  },
  { path: /^\/app\/docs$/, load: () => import('./pages/docs.jsx') },
  { path: /^\/app\/support$/, load: () => import('./pages/support.jsx'), public: true },
  { path: /^\/app\/callback$/, load: () => import('./pages/callback.jsx'), public: true },
];

export function match(pathname) {
  for (const r of routes) {
    const m = r.path.exec(pathname);
    if (m) return { route: r, params: r.params ? r.params(m) : {} };
  }
  return null;
}

const listeners = new Set();
export function onNavigate(f) {
  listeners.add(f);
  return () => listeners.delete(f);
}

// In-app navigation: history entry, then the shell renders the new page.
export function navigate(to, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const f of listeners) f();
}

addEventListener('popstate', () => {
  for (const f of listeners) f();
});

// Plain <a href="/app/..."> links navigate in place (left click, no modifier).
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/app') || !match(url.pathname)) return;
  // A link within this page (the skip link's #main) is the browser's to follow.
  if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
});
