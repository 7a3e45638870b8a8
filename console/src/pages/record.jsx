// Record: the microphone streamed live through the realtime API. Partials
// show as they come (the turn in progress), finals are appended to a log
// that screen readers announce; Stop ends the session, and the finished
// transcription (transcribed again from the stored audio) opens in the reader.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Status, formatTime, formatUsd, useTitle } from '../ui.jsx';
import { microphoneProblem, openMicrophone } from '../record/microphone.js';
import { startSession } from '../record/live_session.js';

function GrantHint({ error }) {
  const [me, setMe] = useState(null);
  useEffect(() => {
    if (error?.code === 'unsupported_pipeline') api('/api/v1/me').then(setMe, () => {});
  }, [error]);
  if (error?.code !== 'unsupported_pipeline') return null;
  return (
    <p class="panel">
      Live transcription is switched on per account by the operator of this scribe. Ask them to run{' '}
      <code>scribe admin realtime grant --account {me ? me.user_id : 'YOUR_ACCOUNT_ID'}</code>, then try again. Meanwhile
      you can upload a recording from the <a href="/app">library</a>.
    </p>
  );
}

export default function Record() {
  useTitle('Record');
  const [phase, setPhase] = useState('idle'); // idle, starting, live, stopping, ended
  const [error, setError] = useState(null);
  const [finals, setFinals] = useState([]);
  const [partial, setPartial] = useState('');
  const [note, setNote] = useState('');
  const [peak, setPeak] = useState(0);
  const [elapsed, setElapsed] = useState(0);
  const [result, setResult] = useState(null);
  const [cap, setCap] = useState(10);
  const live = useRef({ session: null, mic: null, timer: null });

  const release = () => {
    const l = live.current;
    l.mic?.stop();
    l.mic = null;
    clearInterval(l.timer);
    l.timer = null;
  };

  useEffect(
    () => () => {
      release();
      live.current.session?.stop();
    },
    [],
  );

  const start = async () => {
    setError(null);
    setFinals([]);
    setPartial('');
    setResult(null);
    setElapsed(0);
    setPhase('starting');
    setNote('Opening the microphone…');
    const l = live.current;
    let session = null;
    const frames = [];
    const fail = (e) => {
      release();
      setPhase('idle');
      setNote('');
      setError(e);
    };
    try {
      // The microphone first: a refusal then costs no session (and no hold).
      l.mic = await openMicrophone((pcm, p) => {
        setPeak(p);
        if (session) session.send(pcm);
        else frames.push(pcm);
      });
    } catch (e) {
      fail({ message: microphoneProblem(e) });
      return;
    }
    try {
      setNote('Starting the session…');
      session = await startSession({
        capMinutes: cap,
        on: {
          begin: (b) => {
            setPhase((p) => (p === 'stopping' ? p : 'live'));
            setNote(
              b.resumed
                ? 'Reconnected: listening again.'
                : `Listening (${l.mic?.label || 'microphone'}). Speak; press Stop when you are done.`,
            );
            if (!l.timer) {
              const t0 = Date.now();
              l.timer = setInterval(() => setElapsed((Date.now() - t0) / 1000), 1000);
            }
          },
          reconnecting: () => setNote('The connection dropped: reconnecting…'),
          partial: (t) => setPartial(t.transcript),
          final: (t) => {
            setPartial('');
            // After a resume the server sends finals again from the last one seen.
            if (t.transcript.trim())
              setFinals((f) => (f.some((x) => x.order === t.turn_order) ? f : [...f, { order: t.turn_order, text: t.transcript }]));
          },
          warning: (w) => setNote(w.message || w.code),
          // The session has ended itself (or could not be resumed): say why.
          error: (e) => setError(e),
          ended: (term) => {
            release();
            setPhase('ended');
            setResult({ term, transcriptionId: session?.transcriptionId ?? l.session?.transcriptionId });
            setNote(term ? 'Recording ended.' : 'The stream ended.');
          },
        },
      });
      l.session = session;
      for (const f of frames.splice(0)) session.send(f);
    } catch (e) {
      fail(e);
    }
  };

  const stop = async () => {
    setPhase('stopping');
    setNote('Finishing: the last words are being recognized…');
    release();
    await live.current.session?.stop();
  };

  const busy = phase === 'starting' || phase === 'live' || phase === 'stopping';
  return (
    <section class="record">
      <h1>Record</h1>
      <p>
        Transcribe from your microphone as you speak. The words appear as they are recognized; when you stop, the
        recording is transcribed once more in full (speakers, chapters, search) and opens in the reader.
      </p>
      <div class="row record-controls">
        <div>
          <label for="record-cap">Stop automatically after (minutes)</label>
          <input
            id="record-cap"
            type="number"
            min="1"
            max="60"
            step="1"
            value={cap}
            disabled={busy}
            onInput={(e) => setCap(Math.max(1, Math.min(60, Math.round(Number(e.target.value) || 1))))}
          />
        </div>
      </div>
      <div class="row">
        {!busy ? (
          <button type="button" onClick={start}>
            Start recording
          </button>
        ) : (
          <button type="button" class="danger" onClick={stop} disabled={phase !== 'live'}>
            Stop recording
          </button>
        )}
        {phase === 'live' && (
          <span>
            <span class="visually-hidden">Elapsed time </span>
            {formatTime(elapsed)}
          </span>
        )}
      </div>
      {busy && (
        <div>
          <label for="record-level">Microphone level</label>
          <meter id="record-level" class="meter" min="0" max="1" low="0.05" high="0.9" value={peak} />
        </div>
      )}
      <Status>{note}</Status>
      <ErrorNote error={error} />
      <GrantHint error={error} />
      <h2 id="record-transcript-h">Transcript</h2>
      <div class="panel record-live">
        {!finals.length && !partial && <p class="muted">{phase === 'live' ? 'Listening…' : 'Nothing recorded yet.'}</p>}
        <div role="log" aria-live="polite" aria-labelledby="record-transcript-h">
          <ol class="record-finals">
            {finals.map((f) => (
              <li key={f.order}>{f.text}</li>
            ))}
          </ol>
        </div>
        {busy && <p class="record-partial">{partial}</p>}
      </div>
      {result && result.transcriptionId && (
        <div class="panel">
          {result.term && (
            <p>
              Recorded {formatTime(result.term.audio_duration_seconds)}; charged{' '}
              {formatUsd(result.term.charge_usd)}.
            </p>
          )}
          <p>
            <a class="button" href={`/app/transcriptions/${result.transcriptionId}`}>
              Open the transcription
            </a>
          </p>
        </div>
      )}
    </section>
  );
}
