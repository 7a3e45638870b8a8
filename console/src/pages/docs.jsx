// API docs: the OpenAPI document (/api/v1/openapi.yaml) rendered by
// swagger-ui, bundled here (swagger-ui-dist's self-contained ES bundle) so it
// lives only in this page's chunk. Its stylesheet is a hashed asset linked
// while the page is shown (build.mjs `?url`): nothing inline, so the strict
// Content-Security-Policy holds. "Try it out" is off: this page is for
// reading; the document's servers and examples say how to call the API.
import { useEffect, useRef, useState } from 'preact/hooks';
import SwaggerUI from 'swagger-ui-dist/swagger-ui-es-bundle.js';
import swaggerCss from 'swagger-ui-dist/swagger-ui.css?url';
import { Status, useTitle } from '../ui.jsx';

const SPEC = '/api/v1/openapi.yaml';

function useStylesheet(href) {
  useEffect(() => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = href;
    document.head.append(link);
    return () => link.remove();
  }, [href]);
}

export default function Docs() {
  useTitle('API docs');
  useStylesheet(swaggerCss);
  const host = useRef();
  // swagger-ui reports a document it cannot load in its own panel.
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let live = true;
    SwaggerUI({
      domNode: host.current,
      url: SPEC,
      deepLinking: false,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      supportedSubmitMethods: [],
      validatorUrl: null,
      onComplete: () => {
        // swagger-ui's server picker has no accessible name of its own.
        host.current?.querySelector('select#servers')?.setAttribute('aria-label', 'Server');
        if (live) setLoading(false);
      },
    });
    return () => {
      live = false;
      if (host.current) host.current.textContent = '';
    };
  }, []);

  return (
    <section class="docs-page">
      <h1>API docs</h1>
      <p>
        The scribe HTTP API, from its OpenAPI document (<a href={SPEC}>openapi.yaml</a>). Every error's
        code is explained in the <a href="/docs/errors">error reference</a>; for help, see{' '}
        <a href="/app/support">support</a>.
      </p>
      {loading && <Status>Loading the API document…</Status>}
      <div class="docs-render" ref={host} />
    </section>
  );
}
