// The console's shell: header and navigation, the sign-in gate, and the page
// the URL names (router.js). Pages call the public API only (api.js).
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { match, onNavigate } from './router.js';
import { signIn, signOut, signedIn, onSignedInChange } from './auth.js';
import { ErrorNote } from './ui.jsx';
import './styles.css';

const NAV = [
  ['/app', 'Library'],
  ['/app/search', 'Search'],
  ['/app/record', 'Record'],
  ['/app/account', 'Account'],
  ['/app/docs', 'API docs'],
];

function current(pathname) {
  if (pathname === '/app' || pathname === '/app/') return '/app';
  return NAV.map(([href]) => href).find((href) => href !== '/app' && pathname.startsWith(href));
}

function App() {
  const [loc, setLoc] = useState(location.pathname + location.search);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [isIn, setIn] = useState(signedIn());
  const main = useRef();
  const first = useRef(true);

  useEffect(() => onNavigate(() => setLoc(location.pathname + location.search)), []);
  useEffect(() => onSignedInChange(setIn), []);

  useEffect(() => {
    const m = match(location.pathname);
    setError(null);
    if (!m) {
      setPage({ Component: NotFound, params: {} });
      return;
    }
    if (!m.route.public && !signedIn()) {
      signIn();
      return;
    }
    let live = true;
    m.route.load().then(
      (mod) => {
        if (!live) return;
        // The page is keyed by the location it was loaded for, so the old
        // page is not mounted again under the new key (with its old params)
        // while the new page's module loads.
        setPage({ Component: mod.default, params: m.params, loc: location.pathname + location.search });
        // Move focus to the new page for keyboard and screen-reader users
        // (not on the first load: the browser starts at the top anyway).
        if (!first.current) main.current?.focus();
        first.current = false;
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [loc]);

  const here = current(location.pathname);
  const query = new URLSearchParams(location.search);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/app">
          scribe
        </a>
        {isIn && (
          <nav aria-label="Main">
            <ul>
              {NAV.map(([href, label]) => (
                <li key={href}>
                  <a href={href} aria-current={here === href ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {isIn && (
          <button type="button" class="secondary signout" onClick={() => signOut().then(() => location.assign('/app/support'))}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <ErrorNote error={error} />
        {page && <page.Component key={page.loc} params={page.params} query={query} />}
      </main>
      <footer class="bottom">
        <a href="/app/support">Help and support</a>
      </footer>
    </>
  );
}

function NotFound() {
  useEffect(() => {
    document.title = 'Not found · scribe';
  }, []);
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. Go to the <a href="/app">library</a>.
      </p>
    </section>
  );
}

// Preact diffs against what the container holds: the boot message goes first,
// or it stays below the footer.
const root = document.getElementById('app');
root.textContent = '';
render(<App />, root);
