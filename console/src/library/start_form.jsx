// Price, then start: the quote for an uploaded file or a link (POST
// /api/v1/quotes, free, starts nothing) is shown before anything is charged;
// the person may set a maximum charge, sent as `max_charge_usd` (the server
// refuses with 402 max_charge_exceeded above it, holding nothing), and a
// reference of their own; Start sends POST /api/v1/transcriptions with an
// Idempotency-Key, so a double click or a retried request starts one job.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, formatTime } from '../ui.jsx';
import { markStarted, requestBody } from './uploads.js';

// Charges are micro-dollars: a short recording costs a fraction of a cent, so
// amounts under a dollar keep up to six decimals ("$0.001389").
export function formatCharge(n) {
  if (n === null || n === undefined) return '—';
  const v = Number(n);
  if (v === 0 || v >= 1) return `$${v.toFixed(2)}`;
  return `$${v.toFixed(6).replace(/0+$/, '').replace(/\.(\d)$/, '.$10')}`;
}

// What to do about the refusals a person can meet here, beside the API's
// own message (ErrorNote shows that and its documentation link).
const ADVICE = {
  max_charge_exceeded: 'Raise the maximum charge to at least the quoted charge, or leave it empty.',
  insufficient_funds: 'Add funds to the wallet (Account, Billing), or wait for running jobs to release their holds.',
  spend_cap_exceeded: 'The monthly spending cap is reached; raise it under Account.',
  rate_limited: 'Wait a minute (the message says which limit), then start again.',
  queue_full: 'Too many transcriptions are waiting; start again when some have finished.',
  source_busy: 'The video platform is refusing requests for this link now; try again in a few minutes.',
  video_members_only: 'Download the recording and upload the file instead.',
  video_age_restricted: 'Download the recording and upload the file instead.',
  invalid_request: 'Check the field named in the message.',
};

export function StartForm({ item, onStarted }) {
  const [quote, setQuote] = useState(null);
  const [quoteError, setQuoteError] = useState(null);
  const [duration, setDuration] = useState('');
  const [maxCharge, setMaxCharge] = useState('');
  const [reference, setReference] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  // One key per item: every retry of this start is the same request.
  const idem = useRef(crypto.randomUUID());
  const id = `lib-start-${item.key}`;
  const needsDuration = item.kind === 'file' && !item.duration;
  const durationSeconds = needsDuration ? Number(duration) * 60 : undefined;

  useEffect(() => {
    if (needsDuration && !(durationSeconds > 0)) return;
    let live = true;
    setQuote(null);
    setQuoteError(null);
    api('/api/v1/quotes', { method: 'POST', body: requestBody(item, { duration: durationSeconds }) }).then(
      (q) => live && setQuote(q),
      (e) => live && setQuoteError(e),
    );
    return () => {
      live = false;
    };
  }, [item.key, durationSeconds]);

  async function start(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api('/api/v1/transcriptions', {
        method: 'POST',
        headers: { 'idempotency-key': idem.current },
        body: requestBody(item, { maxCharge, clientReference: reference.trim(), duration: durationSeconds }),
      });
      markStarted(item, created);
      onStarted?.(created, item);
    } catch (err) {
      setError(err);
      // A refused request may be corrected and sent again: a new key, since
      // the server keeps the refusal under the old one.
      idem.current = crypto.randomUUID();
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="lib-start" onSubmit={start} aria-label={`Start transcribing ${item.name}`}>
      {needsDuration && (
        <div>
          <label for={`${id}-dur`}>Length in minutes (this browser cannot read the file's length)</label>
          <input
            id={`${id}-dur`}
            type="number"
            min="0.01"
            step="any"
            required
            value={duration}
            onInput={(e) => setDuration(e.currentTarget.value)}
          />
        </div>
      )}
      <ErrorNote error={quoteError} />
      {quote ? (
        <dl class="lib-quote" aria-label={`Quote for ${item.name}`}>
          <div>
            <dt>Length</dt>
            <dd>{formatTime(quote.duration_seconds)}</dd>
          </div>
          <div>
            <dt>Billed minutes</dt>
            <dd>{quote.billed_minutes}</dd>
          </div>
          <div>
            <dt>Charge</dt>
            <dd>{formatCharge(quote.retail_usd)}</dd>
          </div>
          <div>
            <dt>Rate</dt>
            <dd>${quote.retail_usd_per_hour} per hour</dd>
          </div>
        </dl>
      ) : (
        !quoteError && !needsDuration && <p class="small muted">Pricing…</p>
      )}
      <div class="row lib-start-fields">
        <div>
          <label for={`${id}-max`}>Maximum charge in USD (optional)</label>
          <input
            id={`${id}-max`}
            type="number"
            min="0"
            step="any"
            inputMode="decimal"
            value={maxCharge}
            onInput={(e) => setMaxCharge(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for={`${id}-ref`}>Your reference (optional)</label>
          <input
            id={`${id}-ref`}
            type="text"
            maxLength={200}
            value={reference}
            onInput={(e) => setReference(e.currentTarget.value)}
          />
        </div>
      </div>
      <ErrorNote error={error} />
      {error && ADVICE[error.code] && <p class="small lib-advice">{ADVICE[error.code]}</p>}
      <button type="submit" disabled={busy || !quote}>
        {busy ? 'Starting…' : 'Start transcription'}
      </button>
    </form>
  );
}
