-- Media intake (POST /api/v1/uploads and the tus server under
-- /api/v1/uploads/tus/files). Decision: uploads are operational state, like
-- the rate limiter and the idempotency cache, not an event-sourced aggregate.
-- Byte offsets change on every PATCH and mean nothing once the file is in the
-- object store; the domain fact that matters (which file a transcription
-- used) is already recorded by the TranscriptionCreated event's upload_id.
-- So there are no Upload events: one row per upload, written by the API.
--
-- id: the normalized upload id the transcription endpoints take and the
-- object store key after "uploads/": 'upl_<hex>' (presigned) or 'tus/<hex>'
-- (resumable). Resumable uploads keep the SHA-256 of their resume token only.
create table uploads (
  id                text primary key,
  account_id        bigint not null,
  kind              text not null check (kind in ('presigned', 'tus')),
  filename          text,
  content_type      text,
  declared_size     bigint not null check (declared_size >= 0),
  received_bytes    bigint not null default 0,
  resume_token_hash text,
  created_at        timestamptz not null default now(),
  expires_at        timestamptz not null,
  completed_at      timestamptz
);
create index uploads_account on uploads (account_id, created_at);
create index uploads_unfinished_expiry on uploads (expires_at) where completed_at is null;
