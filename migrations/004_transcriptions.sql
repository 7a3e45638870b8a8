-- Read models of the Transcription aggregate (inline projections, written in
-- the appending transaction so that GET after POST sees the new row).
create sequence transcription_ids;

create table transcriptions (
  id                    bigint primary key,
  account_id            bigint not null,
  key_id                bigint,
  status                text   not null,
  stage                 text   not null,
  attempt               int    not null default 0,
  source                text   not null,
  url                   text,
  upload_id             text,
  original_filename     text,
  title                 text,
  language              text   not null,
  detected_language     text,
  pipeline_code         text   not null,
  addons                jsonb  not null default '[]'::jsonb,
  client_reference      text,
  callback_url          text,
  duration_seconds      double precision,
  billed_seconds        bigint not null default 0,
  charge_micros         bigint not null default 0,
  hold_id               text,
  error                 jsonb,
  api                   boolean not null default true,
  quote_expires_at      timestamptz,
  created_at            timestamptz not null,
  processing_started_at timestamptz,
  completed_at          timestamptz,
  updated_at            timestamptz not null
);
-- Listing is newest first per account, optionally by client_reference.
create index transcriptions_account_newest on transcriptions (account_id, id desc);
create index transcriptions_client_reference on transcriptions (account_id, client_reference, id desc)
  where client_reference is not null;

-- The work queue: one row per attempt waiting for or held by a worker.
-- Workers claim with FOR UPDATE SKIP LOCKED and a lease (see pipeline/).
create table jobs (
  transcription_id bigint not null,
  attempt          int    not null,
  account_id       bigint not null,
  state            text   not null default 'queued',  -- queued | running
  lease_owner      text,
  lease_expires_at timestamptz,
  enqueued_at      timestamptz not null,
  primary key (transcription_id, attempt)
);
create index jobs_queued on jobs (enqueued_at) where state = 'queued';

-- Server-side secrets (HMAC keys for callback secrets and signed upload URLs),
-- generated once by the first process that needs them.
create table service_secrets (
  name       text primary key,
  value      text not null,
  created_at timestamptz not null default now()
);
