// "Add the original video" for a transcription of an upload: the spec's clips
// section says an upload needs its original video added in the web app before
// `output: video` clips work. The person chooses the video file; it goes up
// through a presigned upload (POST /api/v1/uploads, then one PUT, whose
// progress XMLHttpRequest reports) and POST .../video attaches it. The server
// checks that it is the caller's, has a video stream and the recording's
// length (api/openapi.yaml, "Media"); its refusals are shown as they come.
import { useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { ErrorNote, Status } from '../ui.jsx';

// The upload endpoint's video types, by extension when the browser names none.
const BY_EXTENSION = { mp4: 'video/mp4', m4v: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime', avi: 'video/x-msvideo' };
const ACCEPT = 'video/mp4,video/webm,video/quicktime,video/x-msvideo,.mp4,.m4v,.webm,.mov,.avi';

function contentType(file) {
  if (Object.values(BY_EXTENSION).includes(file.type)) return file.type;
  return BY_EXTENSION[file.name.split('.').pop().toLowerCase()] || null;
}

// PUT with progress: fetch() reports none for a request body.
function put(url, file, type, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('Content-Type', type);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {}
      reject(new ApiError(xhr.status, body, `the upload was refused (HTTP ${xhr.status})`));
    };
    xhr.onerror = () => reject(new Error('the connection dropped during the upload; choose the file again'));
    xhr.send(file);
  });
}

export function OriginalVideo({ id, onAdded }) {
  const input = useRef();
  const [progress, setProgress] = useState(null);
  const [status, setStatus] = useState('');
  const [error, setError] = useState(null);

  const add = async (e) => {
    e.preventDefault();
    const file = input.current.files[0];
    setError(null);
    if (!file) return setError(new Error('choose the video file first'));
    const type = contentType(file);
    if (!type) return setError(new Error(`${file.name} is not an MP4, WebM, QuickTime or AVI video`));
    try {
      setStatus(`Uploading ${file.name}…`);
      setProgress(0);
      const ticket = await api('/api/v1/uploads', {
        method: 'POST',
        body: { filename: file.name, content_type: type, file_size: file.size },
      });
      await put(ticket.upload_url, file, type, setProgress);
      setStatus('Checking the video against the recording…');
      await api(`/api/v1/transcriptions/${encodeURIComponent(id)}/video`, {
        method: 'POST',
        body: { upload_id: ticket.upload_id },
      });
      setStatus(`Added ${file.name}: video clips of this recording can be made now.`);
      input.current.value = '';
      onAdded();
    } catch (err) {
      setStatus('');
      setError(err);
    } finally {
      setProgress(null);
    }
  };

  return (
    <details class="rail-part">
      <summary>
        <h2>Original video</h2>
      </summary>
      <p class="small">
        Add the video this recording came from to make video clips of it. It must be the same recording (the same length).
      </p>
      <form onSubmit={add}>
        <label for="original-video">Video file</label>
        <input id="original-video" ref={input} type="file" accept={ACCEPT} />
        <div class="row">
          <button type="submit" disabled={progress !== null}>
            Add video
          </button>
        </div>
      </form>
      {progress !== null && (
        <progress aria-label="Video upload" max="1" value={progress}>
          {Math.round(progress * 100)}%
        </progress>
      )}
      <Status>{status}</Status>
      <ErrorNote error={error} />
    </details>
  );
}
