// Correcting a transcript: edits are a draft of the whole cue list, saved as
// a revision (POST /revisions with the revision it was based on; a 409 means
// someone saved another one meanwhile) and undone by deleting the latest
// revision (the recognized transcript always stays). Speakers get display
// names per recording label; a segment can move to another speaker.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ConfirmButton, ErrorNote, Status } from '../ui.jsx';
import { mergeWithNext, nextLabel, replaceCue, speakerLabels, splitCue } from './cues.js';

export function EditBar({ draft, setDraft, revision, busy, status, error, onStart, onSave, onDiscard, onUndo, onReloadLatest }) {
  const labels = draft ? speakerLabels(draft.cues, draft.names) : [];
  return (
    <div class="editbar panel">
      <div class="row">
        {!draft && (
          <button type="button" onClick={onStart} disabled={busy}>
            Edit transcript
          </button>
        )}
        {draft && (
          <>
            <button type="button" onClick={onSave} disabled={busy}>
              Save as revision
            </button>
            <button type="button" class="secondary" onClick={onDiscard} disabled={busy}>
              Discard edits
            </button>
          </>
        )}
        {revision !== null && !draft && (
          <ConfirmButton
            label="Undo last revision"
            class="secondary"
            question={`Undo revision ${revision}? The one before it (or the recognized transcript) becomes current again.`}
            confirmLabel="Undo revision"
            onConfirm={onUndo}
            disabled={busy}
          />
        )}
        <span class="muted small">
          {draft ? 'Editing, based on ' : 'Showing '}
          {revision === null ? 'the recognized transcript.' : `revision ${revision}.`}
        </span>
      </div>
      <Status>{status}</Status>
      <ErrorNote error={error} />
      {error?.details?.reason === 'revision_conflict' && (
        <p>
          Your edits are still here.{' '}
          <button type="button" class="secondary" onClick={onReloadLatest}>
            Discard them and load revision {error.details.latest_revision ?? 'latest'}
          </button>
        </p>
      )}
      {draft && (
        <fieldset class="speakers">
          <legend>Speaker names</legend>
          <p class="small muted">A display name per recording label; leave blank to show the label.</p>
          {labels.map((l) => (
            <div key={l} class="speaker-name">
              <label for={`name-${l}`}>Name for {l}</label>
              <input
                id={`name-${l}`}
                value={draft.names[l] || ''}
                maxLength={64}
                onInput={(e) => setDraft({ ...draft, names: { ...draft.names, [l]: e.target.value } })}
              />
            </div>
          ))}
          {labels.length === 0 && <p class="small muted">No speakers were labelled in this recording.</p>}
        </fieldset>
      )}
    </div>
  );
}

// Milliseconds as seconds with three decimals: a cue opened and applied
// unchanged keeps its exact times.
const secs = (ms) => (ms / 1000).toFixed(3);

// The editor of one segment, in a modal dialog (the list behind it is
// virtualized, so the form does not live inside a row).
export function CueDialog({ draft, index, onChange, onClose, clock }) {
  const ref = useRef();
  const textRef = useRef();
  const cue = index === null ? null : draft.cues[index];
  const [form, setForm] = useState(null);
  const [error, setError] = useState(null);
  const labels = speakerLabels(draft.cues, draft.names);

  useEffect(() => {
    if (!cue) return;
    setForm({ text: cue.text, start: secs(cue.start_ms), end: secs(cue.end_ms), speaker: cue.speaker || '' });
    setError(null);
    if (!ref.current.open) ref.current.showModal();
  }, [index]);

  if (!cue || !form) return <dialog ref={ref} aria-label="Edit segment" />;

  const edited = () => ({
    text: form.text,
    start_ms: Math.round(Number(form.start) * 1000),
    end_ms: Math.round(Number(form.end) * 1000),
    speaker: form.speaker || null,
  });
  const attempt = (f) => {
    try {
      f();
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  const close = () => {
    ref.current.close();
    onClose();
  };
  const apply = () =>
    attempt(() => {
      onChange(replaceCue(draft.cues, index, edited()));
      close();
    });
  const split = () =>
    attempt(() => {
      const cues = replaceCue(draft.cues, index, edited());
      const at = textRef.current.selectionStart ?? 0;
      // The caret counts in the field's text; the stored text is trimmed.
      const lead = form.text.length - form.text.trimStart().length;
      onChange(splitCue(cues, index, Math.max(0, at - lead)));
      close();
    });
  const merge = () =>
    attempt(() => {
      onChange(mergeWithNext(replaceCue(draft.cues, index, edited()), index));
      close();
    });
  const here = (field) => setForm({ ...form, [field]: secs(clock.now()) });
  const newLabel = nextLabel(labels);

  return (
    <dialog ref={ref} aria-label="Edit segment" class="cue-dialog" onClose={onClose}>
      <h2>Edit segment</h2>
      <label for="cue-text">Text</label>
      <textarea id="cue-text" ref={textRef} rows={4} maxLength={1000} value={form.text} onInput={(e) => setForm({ ...form, text: e.target.value })} />
      <div class="row">
        <div>
          <label for="cue-start">Start (seconds)</label>
          <input id="cue-start" type="number" step="0.001" min="0" value={form.start} onInput={(e) => setForm({ ...form, start: e.target.value })} />
          <button type="button" class="secondary small-button" onClick={() => here('start')}>
            Start at playback position
          </button>
        </div>
        <div>
          <label for="cue-end">End (seconds)</label>
          <input id="cue-end" type="number" step="0.001" min="0" value={form.end} onInput={(e) => setForm({ ...form, end: e.target.value })} />
          <button type="button" class="secondary small-button" onClick={() => here('end')}>
            End at playback position
          </button>
        </div>
      </div>
      <label for="cue-speaker">Speaker</label>
      <select id="cue-speaker" value={form.speaker} onChange={(e) => setForm({ ...form, speaker: e.target.value })}>
        <option value="">Unknown speaker</option>
        {labels.map((l) => (
          <option key={l} value={l}>
            {draft.names[l] ? `${draft.names[l]} (${l})` : l}
          </option>
        ))}
        <option value={newLabel}>New speaker ({newLabel})</option>
      </select>
      <ErrorNote error={error} />
      <div class="row dialog-actions">
        <button type="button" onClick={apply}>
          Apply
        </button>
        <button type="button" class="secondary" onClick={split}>
          Split at the cursor
        </button>
        <button type="button" class="secondary" onClick={merge} disabled={index + 1 >= draft.cues.length}>
          Merge with the next segment
        </button>
        <button type="button" class="secondary" onClick={close}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
