// The library's "Add recordings" panel: a drop zone and a file picker for one
// or many files, a link form, and one card per file or link with its upload
// progress, the quote and the start form (start_form.jsx).
import { useEffect, useState } from 'preact/hooks';
import {
  addFiles,
  addLink,
  forgetPreviousUpload,
  onUploadsChange,
  pause,
  previousUploads,
  remove,
  resume,
  uploadItems,
} from './uploads.js';
import { StartForm } from './start_form.jsx';
import { ErrorNote, formatDate } from '../ui.jsx';

export const formatBytes = (n) =>
  n >= 1 << 30
    ? `${(n / (1 << 30)).toFixed(1)} GB`
    : n >= 1 << 20
      ? `${(n / (1 << 20)).toFixed(1)} MB`
      : `${Math.max(1, Math.round(n / 1024))} KB`;

export function useUploads() {
  const [list, setList] = useState(uploadItems());
  useEffect(() => onUploadsChange(() => setList(uploadItems())), []);
  return list;
}

export function UploadPanel({ onStarted }) {
  const list = useUploads();
  const [over, setOver] = useState(false);
  const [earlier, setEarlier] = useState([]);

  const refreshEarlier = () => previousUploads().then(setEarlier);
  useEffect(() => {
    refreshEarlier();
  }, [list.map((i) => `${i.key}:${i.state}`).join()]);

  const onDrop = (e) => {
    e.preventDefault();
    setOver(false);
    const files = [...(e.dataTransfer?.files || [])];
    if (files.length) addFiles(files);
  };

  return (
    <section class="panel lib-add" aria-labelledby="lib-add-h">
      <h2 id="lib-add-h">Add recordings</h2>
      <div
        class={`lib-drop${over ? ' over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p>Drop audio or video files here, or choose them:</p>
        <label for="lib-files">Audio or video files</label>
        <input
          id="lib-files"
          type="file"
          multiple
          accept="audio/*,video/*"
          onChange={(e) => {
            addFiles([...e.currentTarget.files]);
            e.currentTarget.value = '';
          }}
        />
        <p class="muted small">Uploads resume after a lost connection, and after a reload when you choose the same file again.</p>
      </div>
      {earlier.length > 0 && (
        <div class="lib-earlier">
          <h3>Unfinished uploads from before</h3>
          <p class="muted small">Choose or drop the same file again to continue where it stopped.</p>
          <ul>
            {earlier.map((e) => (
              <li key={e.urlStorageKey}>
                {e.metadata?.filename || 'a file'} ({formatBytes(e.size || 0)}, started {formatDate(e.creationTime)}){' '}
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Forget the unfinished upload of ${e.metadata?.filename || 'a file'}`}
                  onClick={() => forgetPreviousUpload(e).then(refreshEarlier)}
                >
                  Forget
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <LinkForm />
      {list.length > 0 && (
        <ul class="lib-items" aria-label="Uploads">
          {list.map((item) => (
            <UploadItem key={item.key} item={item} onStarted={onStarted} />
          ))}
        </ul>
      )}
    </section>
  );
}

function LinkForm() {
  const [url, setUrl] = useState('');
  const [source, setSource] = useState('external_url');
  return (
    <form
      class="lib-link"
      onSubmit={(e) => {
        e.preventDefault();
        if (!url.trim()) return;
        addLink(url.trim(), source);
        setUrl('');
      }}
    >
      <div>
        <label for="lib-link-url">Or transcribe a link</label>
        <input
          id="lib-link-url"
          type="url"
          inputMode="url"
          placeholder="https://…"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
      </div>
      <div>
        <label for="lib-link-kind">Kind of link</label>
        <select id="lib-link-kind" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
          <option value="external_url">A media file (direct link)</option>
          <option value="video_site">A video site page</option>
          <option value="platform_url">A podcast or platform page</option>
        </select>
      </div>
      <button type="submit">Add link</button>
    </form>
  );
}

const STATE_TEXT = {
  preparing: 'Preparing…',
  uploading: 'Uploading',
  paused: 'Paused',
  offline: 'Connection lost: continues when you are back online',
  failed: 'Stopped',
  uploaded: 'Uploaded',
  started: 'Started',
};

function UploadItem({ item, onStarted }) {
  const id = `lib-item-${item.key}`;
  const pct = item.kind === 'file' && item.size ? Math.floor((100 * item.sent) / item.size) : 100;
  const canPause = item.kind === 'file' && (item.state === 'uploading' || item.state === 'preparing');
  const canResume = item.kind === 'file' && (item.state === 'paused' || item.state === 'failed' || item.state === 'offline');
  return (
    <li class="lib-item" aria-labelledby={`${id}-name`}>
      <div class="row lib-item-head">
        <strong id={`${id}-name`} class="lib-name">
          {item.name}
        </strong>
        {item.kind === 'file' && <span class="muted small">{formatBytes(item.size)}</span>}
      </div>
      {item.kind === 'file' && item.state !== 'started' && (
        <>
          <progress id={`${id}-progress`} max="100" value={pct} aria-label={`Upload of ${item.name}`} />
          <p class="small lib-item-state" role="status">
            {STATE_TEXT[item.state]}
            {item.state !== 'preparing' && ` · ${pct}%`}
            {item.resumedFrom && item.state !== 'uploaded' && ' · continuing an earlier upload'}
          </p>
        </>
      )}
      <ErrorNote error={item.error} />
      <div class="row">
        {canPause && (
          <button type="button" class="secondary" onClick={() => pause(item)} aria-label={`Pause the upload of ${item.name}`}>
            Pause
          </button>
        )}
        {canResume && (
          <button type="button" onClick={() => resume(item)} aria-label={`Resume the upload of ${item.name}`}>
            Resume
          </button>
        )}
        {item.state !== 'started' && (
          <button type="button" class="secondary" onClick={() => remove(item)} aria-label={`Remove ${item.name}`}>
            Remove
          </button>
        )}
      </div>
      {item.state === 'uploaded' && <StartForm item={item} onStarted={onStarted} />}
      {item.state === 'started' && (
        <p class="small" role="status">
          Started:{' '}
          <a href={`/app/transcriptions/${item.transcription.id}`}>{item.name}</a> is transcribing (see the list
          below).{' '}
          <button type="button" class="secondary" onClick={() => remove(item)} aria-label={`Dismiss ${item.name}`}>
            Dismiss
          </button>
        </p>
      )}
    </li>
  );
}
