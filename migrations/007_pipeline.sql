-- The speech pipeline: worker leases, and the transcript read models
-- (segments and words) loaded from each completion's artifact.

-- A job row says that work exists (the transcriptions projection writes it);
-- who holds the job now is operational state written by workers, kept apart
-- so that a rebuilt projection equals the live one. 004's lease columns on
-- `jobs` were never written and go.
drop index jobs_queued;
alter table jobs drop column state, drop column lease_owner, drop column lease_expires_at;
create index jobs_queue_order on jobs (enqueued_at, transcription_id);

create table job_leases (
  transcription_id bigint not null,
  attempt          int    not null,
  account_id       bigint not null,
  owner            text   not null,
  expires_at       timestamptz not null,
  -- How often this attempt has been claimed: a job whose workers keep dying
  -- is failed instead of taking workers down for ever (pipeline/job_queue.cpp).
  claims           int    not null default 0,
  claimed_at       timestamptz not null,
  primary key (transcription_id, attempt)
);
create index job_leases_account on job_leases (account_id, expires_at);

-- Segment ids are drawn by the worker before completion and written into the
-- artifact, so a rebuild of the segments projection gives the same ids.
create sequence segment_ids;

create table segments (
  id               bigint primary key,
  transcription_id bigint not null,
  segment_index    int    not null,
  start_ms         bigint not null,
  end_ms           bigint not null,
  speaker          text,
  text             text   not null,
  unique (transcription_id, segment_index)
);

create table words (
  transcription_id bigint not null,
  word_index       int    not null,
  segment_id       bigint not null,
  text             text   not null,
  start_ms         bigint not null,
  end_ms           bigint not null,
  punctuation      text,
  speaker          text,
  confidence       real,
  primary key (transcription_id, word_index)
);
