// Downloads of every transcript format (/transcript: txt, md) and subtitle
// format and preset (/subtitles: srt, vtt, vtt-karaoke, json × presets). The
// API needs the Bearer header, which a plain link cannot send: the file is
// fetched, then saved through a blob URL under the server's file name.
import { useState } from 'preact/hooks';
import { apiText, qs } from '../api.js';
import { ErrorNote, Status } from '../ui.jsx';

const SUB_FORMATS = [
  ['srt', 'SRT', 'srt'],
  ['vtt', 'WebVTT', 'vtt'],
  ['vtt-karaoke', 'WebVTT karaoke (word tags)', 'vtt'],
  ['json', 'JSON cues', 'json'],
];
const PRESETS = ['youtube', 'tiktok-shorts', 'instagram-reels', 'netflix', 'podcast', 'broadcast'];

function fileName(headers, fallback) {
  const cd = headers.get('content-disposition') || '';
  const m = /filename\*=UTF-8''([^;]+)/i.exec(cd) || /filename="?([^";]+)"?/i.exec(cd);
  return m ? decodeURIComponent(m[1]) : fallback;
}

async function save(path, fallback) {
  const { text, headers } = await apiText(path);
  const blob = new Blob([text], { type: headers.get('content-type') || 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName(headers, fallback);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return a.download;
}

function Check({ id, label, checked, set }) {
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => set(e.target.checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

export function Downloads({ id, slug }) {
  const base = `/api/v1/transcriptions/${encodeURIComponent(id)}`;
  const [t, setT] = useState({ format: 'txt', speaker_labels: true, timestamps: true, speaker_names: false });
  const [s, setS] = useState({ format: 'srt', preset: 'youtube', speaker_labels: false, speaker_names: false, mode: 'auto', source: 'auto' });
  const [status, setStatus] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const run = async (path, fallback) => {
    setBusy(true);
    setError(null);
    setStatus('Preparing the file…');
    try {
      setStatus(`Downloaded ${await save(path, fallback)}.`);
    } catch (e) {
      setStatus('');
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const transcript = () =>
    run(
      `${base}/transcript${qs({
        format: t.format,
        speaker_labels: String(t.speaker_labels),
        timestamps: String(t.timestamps),
        speaker_names: t.speaker_names ? 'true' : undefined,
      })}`,
      `${slug}.${t.format}`,
    );
  const subtitles = () => {
    const ext = SUB_FORMATS.find((f) => f[0] === s.format)[2];
    run(
      `${base}/subtitles${qs({
        format: s.format,
        preset: s.preset,
        speaker_labels: String(s.speaker_labels || s.speaker_names),
        speaker_names: s.speaker_names ? 'true' : undefined,
        mode: s.mode,
        source: s.source,
      })}`,
      `${slug}-${s.preset}.${ext}`,
    );
  };

  return (
    <details class="rail-part">
      <summary>
        <h2>Downloads</h2>
      </summary>
      <fieldset>
        <legend>Transcript</legend>
        <label for="dl-t-format">Format</label>
        <select id="dl-t-format" value={t.format} onChange={(e) => setT({ ...t, format: e.target.value })}>
          <option value="txt">Plain text (.txt)</option>
          <option value="md">Markdown with chapters (.md)</option>
        </select>
        <Check id="dl-t-labels" label="Speaker labels" checked={t.speaker_labels} set={(v) => setT({ ...t, speaker_labels: v })} />
        <Check id="dl-t-names" label="Speaker names instead of labels" checked={t.speaker_names} set={(v) => setT({ ...t, speaker_names: v })} />
        <Check id="dl-t-times" label="Timestamps" checked={t.timestamps} set={(v) => setT({ ...t, timestamps: v })} />
        <button type="button" onClick={transcript} disabled={busy}>
          Download transcript
        </button>
      </fieldset>
      <fieldset>
        <legend>Subtitles</legend>
        <label for="dl-s-format">Subtitle format</label>
        <select id="dl-s-format" value={s.format} onChange={(e) => setS({ ...s, format: e.target.value })}>
          {SUB_FORMATS.map(([v, l]) => (
            <option key={v} value={v}>
              {l}
            </option>
          ))}
        </select>
        <label for="dl-s-preset">Preset</label>
        <select id="dl-s-preset" value={s.preset} onChange={(e) => setS({ ...s, preset: e.target.value })}>
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <label for="dl-s-source">Cues</label>
        <select id="dl-s-source" value={s.source} onChange={(e) => setS({ ...s, source: e.target.value })}>
          <option value="auto">Edited when there are edits, else generated (auto)</option>
          <option value="materialized">Edited cues only (materialized)</option>
          <option value="generated">Generated from the recognition</option>
        </select>
        <label for="dl-s-mode">Timing</label>
        <select id="dl-s-mode" value={s.mode} onChange={(e) => setS({ ...s, mode: e.target.value })}>
          <option value="auto">Word-timed when possible (auto)</option>
          <option value="word">Word-timed</option>
          <option value="sentence">By sentence</option>
        </select>
        <Check id="dl-s-labels" label="Speaker labels" checked={s.speaker_labels} set={(v) => setS({ ...s, speaker_labels: v })} />
        <Check id="dl-s-names" label="Speaker names instead of labels" checked={s.speaker_names} set={(v) => setS({ ...s, speaker_names: v })} />
        <button type="button" onClick={subtitles} disabled={busy}>
          Download subtitles
        </button>
      </fieldset>
      <Status>{status}</Status>
      <ErrorNote error={error} />
    </details>
  );
}
