// The transcript reader at /app/transcriptions/<id>?t=<sec>: the player
// (seeking to t), the transcript (virtualized, the spoken word highlighted),
// corrections saved as revisions, and the side rail (chapters and sections,
// search, ask, clips, downloads, delete). Parts live in ../reader/.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { navigate } from '../router.js';
import { ConfirmButton, ErrorNote, Status, formatDate, formatTime, useTitle } from '../ui.jsx';
import { createClock } from '../reader/clock.js';
import { createStore } from '../reader/store.js';
import { Player } from '../reader/player.jsx';
import { Transcript } from '../reader/transcript.jsx';
import { Ask, Outline, SearchInside } from '../reader/rail.jsx';
import { Downloads } from '../reader/downloads.jsx';
import { Clips } from '../reader/clips.jsx';
import { OriginalVideo } from '../reader/original_video.jsx';
import { CueDialog, EditBar } from '../reader/editor.jsx';
import { cleanNames } from '../reader/cues.js';

// The latest revision, or null when there is none. The list says which is
// latest (null when none), so no 404 is asked for (a browser logs every
// failed request as an error in its console).
async function latestRevision(base) {
  const list = await api(`${base}/revisions`);
  if (list.latest === null || list.latest === undefined) return null;
  return api(`${base}/revisions/${list.latest}`);
}

export default function Reader({ params, query }) {
  const id = params.id;
  const base = `/api/v1/transcriptions/${encodeURIComponent(id)}`;
  const clock = useMemo(() => createClock(), [id]);
  const [t, setT] = useState(null); // the transcription
  const [first, setFirst] = useState(null); // the first /result (chapters, sections, segments page 0)
  const [store, setStore] = useState(null);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState(null);
  const [rev, setRev] = useState(null); // {revision, cues, speaker_names} or null
  const [draft, setDraft] = useState(null); // {cues, names} while editing
  const [editing, setEditing] = useState(null); // index of the cue in the dialog
  const [editStatus, setEditStatus] = useState('');
  const [editError, setEditError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [videoAdded, setVideoAdded] = useState(0); // remounts the player on the new media
  useTitle(t ? t.title || `Transcription ${id}` : 'Transcript');

  // Seek to ?t= at once (the clock holds it until the media can take it).
  useEffect(() => {
    const at = Number(query.get('t'));
    if (Number.isFinite(at) && at > 0) clock.seek(Math.round(at * 1000));
  }, [clock]);

  // The transcription; wait for it to finish when it is still running.
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        let tr = await api(base);
        if (!live) return;
        setT(tr);
        while (live && tr.status !== 'completed' && tr.status !== 'failed' && tr.status !== 'cancelled') {
          tr = await api(`${base}/wait?timeout=30`);
          if (live) setT((old) => ({ ...old, ...tr }));
        }
        if (!live || tr.status !== 'completed') return;
        const [r, latest] = await Promise.all([
          api(`${base}/result?include=chapters,sections,segments&segments_offset=0&segments_limit=1000`),
          latestRevision(base).catch(() => null),
        ]);
        if (!live) return;
        const s = createStore(id, { durationMs: Math.round((tr.duration_seconds || r.duration_seconds || 0) * 1000) });
        s.open(r);
        if (latest) s.useCues(latest.cues);
        s.subscribe(() => setVersion((v) => v + 1));
        setFirst(r);
        setRev(latest);
        setStore(s);
      } catch (e) {
        if (live) setError(e);
      }
    })();
    return () => {
      live = false;
    };
  }, [id]);

  const names = draft ? draft.names : rev?.speaker_names || {};

  // Unsaved edits: the browser asks before the tab closes or reloads.
  useEffect(() => {
    if (!draft) return;
    const ask = (e) => {
      e.preventDefault();
      e.returnValue = '';
    };
    addEventListener('beforeunload', ask);
    return () => removeEventListener('beforeunload', ask);
  }, [!!draft]);

  const startEditing = async () => {
    setBusy(true);
    setEditError(null);
    setEditStatus('Loading the whole transcript for editing…');
    try {
      const cues = rev ? rev.cues.map((c) => ({ ...c })) : await store.all();
      store.useCues(cues);
      setDraft({ cues, names: { ...(rev?.speaker_names || {}) } });
      setEditStatus('Editing: choose Edit on a segment; save as a revision when done.');
    } catch (e) {
      setEditError(e);
      setEditStatus('');
    } finally {
      setBusy(false);
    }
  };
  const changeCues = (cues) => {
    setDraft({ ...draft, cues });
    store.useCues(cues);
  };
  const showSaved = async (latest) => {
    setRev(latest);
    if (latest) store.useCues(latest.cues);
    else await store.useRecognized();
  };
  const discard = async () => {
    setDraft(null);
    setEditError(null);
    setEditStatus('Edits discarded.');
    await showSaved(rev);
  };
  const save = async () => {
    setBusy(true);
    setEditError(null);
    try {
      const saved = await api(`${base}/revisions`, {
        method: 'POST',
        body: { base_revision: rev ? rev.revision : null, cues: draft.cues, speaker_names: cleanNames(draft.names) },
      });
      setDraft(null);
      await showSaved({ ...saved, cues: saved.cues || draft.cues, speaker_names: saved.speaker_names || cleanNames(draft.names) });
      setEditStatus(`Saved as revision ${saved.revision}.`);
    } catch (e) {
      if (e.details?.reason === 'revision_conflict')
        e.message = `Revision ${e.details.latest_revision} was saved (elsewhere) after you started editing, so yours was not saved. ${e.message}`;
      setEditError(e);
    } finally {
      setBusy(false);
    }
  };
  const reloadLatest = async () => {
    setDraft(null);
    setEditError(null);
    await showSaved(await latestRevision(base));
    setEditStatus('Showing the latest revision.');
  };
  const undo = async () => {
    setBusy(true);
    setEditError(null);
    try {
      const undone = rev?.revision;
      await api(`${base}/revisions/latest`, { method: 'DELETE' });
      await showSaved(await latestRevision(base));
      setEditStatus(`Revision ${undone} undone.`);
    } catch (e) {
      setEditError(e);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    try {
      await api(base, { method: 'DELETE' });
      navigate('/app');
    } catch (e) {
      setError(e);
    }
  };

  const slug = (t?.title || `transcription-${id}`).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || `transcription-${id}`;
  return (
    <section class="reader">
      <h1>{t ? t.title || `Transcription ${id}` : 'Transcript'}</h1>
      {t && (
        <p class="muted small">
          {formatTime(t.duration_seconds)} · {t.status}
          {t.status !== 'completed' && t.stage ? ` (${t.stage})` : ''} · created {formatDate(t.created_at)}
        </p>
      )}
      <ErrorNote error={error} />
      {t && t.status !== 'completed' && t.status !== 'failed' && <Status>Transcribing… the transcript appears here when it is done.</Status>}
      {t?.status === 'failed' && <ErrorNote error={t.error ? { ...t.error, code: t.error.code } : new Error('transcription failed')} />}
      <div class="reader-grid">
        <div class="reader-main">
          <Player key={videoAdded} id={id} clock={clock} />
          {store && (
            <>
              <EditBar
                draft={draft}
                setDraft={setDraft}
                revision={rev ? rev.revision : null}
                busy={busy}
                status={editStatus}
                error={editError}
                onStart={startEditing}
                onSave={save}
                onDiscard={discard}
                onUndo={undo}
                onReloadLatest={reloadLatest}
              />
              <Transcript store={store} clock={clock} names={names} version={version} editing={!!draft} onEdit={setEditing} />
              {draft && <CueDialog draft={draft} index={editing} clock={clock} onChange={changeCues} onClose={() => setEditing(null)} />}
            </>
          )}
          {!store && t?.status === 'completed' && !error && <Status>Loading the transcript…</Status>}
        </div>
        <aside class="rail" aria-label="Transcript tools">
          {first && <Outline chapters={first.chapters} sections={first.sections} clock={clock} />}
          {t?.status === 'completed' && (
            <>
              <SearchInside id={id} clock={clock} names={names} />
              <Ask id={id} clock={clock} />
              <Clips id={id} clock={clock} />
              {t.source === 'upload' && <OriginalVideo id={id} onAdded={() => setVideoAdded((n) => n + 1)} />}
              <Downloads id={id} slug={slug} />
            </>
          )}
          <div class="rail-part danger-zone">
            <h2>Delete</h2>
            <p class="small">Deletes the transcription, its recording, clips and revisions for good.</p>
            <ConfirmButton
              label="Delete transcription"
              question={`Delete “${t?.title || `transcription ${id}`}” for good? This cannot be undone.`}
              confirmLabel="Delete for good"
              onConfirm={remove}
            />
          </div>
        </aside>
      </div>
    </section>
  );
}
