// Small shared pieces of the console's pages: error notes in the API's words,
// live status, confirmation dialogs, formatting, and a data-loading hook.
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';

// An API error with what to do: the message, a link to its documentation,
// and the request id to quote to support.
export function ErrorNote({ error, onDismiss }) {
  if (!error) return null;
  return (
    <div class="error-note" role="alert">
      <p>
        <strong>{error.code ? `${error.code}: ` : ''}</strong>
        {error.message || String(error)}
      </p>
      {error.docUrl && (
        <p>
          <a href={error.docUrl} target="_blank" rel="noreferrer">
            What this means and what to do
          </a>
        </p>
      )}
      {error.requestId && <p class="muted small">Request {error.requestId}</p>}
      {onDismiss && (
        <button type="button" class="secondary" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

// Polite live region: progress and completion announced to screen readers.
export function Status({ children, class: cls = '' }) {
  return (
    <p class={`status ${cls}`} role="status" aria-live="polite">
      {children}
    </p>
  );
}

// A button that asks first, in a modal <dialog> (focus trapped by the browser).
export function ConfirmButton({ label, question, confirmLabel = label, onConfirm, class: cls = 'danger', disabled }) {
  const ref = useRef();
  return (
    <>
      <button type="button" class={cls} disabled={disabled} onClick={() => ref.current.showModal()}>
        {label}
      </button>
      <dialog ref={ref} aria-label={label}>
        <p>{question}</p>
        <div class="row">
          <button
            type="button"
            class={cls}
            onClick={async () => {
              ref.current.close();
              await onConfirm();
            }}
          >
            {confirmLabel}
          </button>
          <button type="button" class="secondary" onClick={() => ref.current.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

// Loads with `fn` whenever `deps` change; `reload()` loads again.
export function useAsync(fn, deps) {
  const [state, setState] = useState({ loading: true, data: undefined, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    fn().then(
      (data) => live && setState({ loading: false, data, error: null }),
      (error) => live && setState({ loading: false, data: undefined, error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function useTitle(title) {
  useEffect(() => {
    document.title = title ? `${title} · scribe` : 'scribe';
  }, [title]);
}

// 3725.4 -> "1:02:05"; 65 -> "1:05".
export function formatTime(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export const formatUsd = (n) => (n === null || n === undefined ? '—' : `$${Number(n).toFixed(2)}`);

export const formatDate = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
