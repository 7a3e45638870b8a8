// A secret the API shows once (a new key's plaintext, a webhook's signing
// secret): read-only field, copy button, and the warning that it will not be
// shown again.
import { useEffect, useRef, useState } from 'preact/hooks';

export function OnceSecret({ label, value, what, onDone }) {
  const [copied, setCopied] = useState('');
  const field = useRef();
  // Focus goes to the secret: it may appear away from the button that made it.
  useEffect(() => field.current?.focus(), [value]);
  const id = `secret-${label.replace(/\W+/g, '-').toLowerCase()}`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select it so Ctrl+C works.
      document.getElementById(id)?.select();
      setCopied('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <div class="panel once-secret">
      <label for={id}>{label}</label>
      <div class="row">
        <input ref={field} id={id} class="mono secret-field" readOnly value={value} onFocus={(e) => e.target.select()} />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p class="warning">
        <strong>Copy it now.</strong> This {what} is shown only once: scribe keeps only its hash. If you lose it, make a
        new one.
      </p>
      <p class="status" role="status" aria-live="polite">
        {copied}
      </p>
      {onDone && (
        <button type="button" class="secondary" onClick={onDone}>
          I have copied it
        </button>
      )}
    </div>
  );
}
