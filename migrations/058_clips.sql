-- Clips (domain/clip.h). `clips` is the read model of the clip streams,
-- written inline by projections/clips_projection.cpp: `view` is the clip as
-- the API shows it before links are signed (domain/clip.h, to_json). The
-- queue of renders is the clips still queued; `clip_leases` (operational
-- state, written by workers/clip_queue.cpp) says which worker renders one.
create sequence clip_ids start 1;

create table clips (
  id               bigint primary key,
  account_id       bigint not null,
  transcription_id bigint not null,
  status           text   not null,
  client_nonce     text,
  video_download   boolean not null default false,
  view             jsonb  not null,
  created_at       timestamptz not null
);
create index clips_transcription on clips (transcription_id, id desc);
create unique index clips_nonce on clips (account_id, client_nonce) where client_nonce is not null;
create index clips_queued on clips (created_at, id) where status = 'queued';

create table clip_leases (
  clip_id    bigint primary key,
  owner      text   not null,
  expires_at timestamptz not null,
  -- How often the render was claimed: one whose workers keep dying is failed
  -- (workers/clip_worker.cpp) instead of taking workers down for ever.
  claims     int    not null default 0,
  claimed_at timestamptz not null
);

-- Clip deliveries name their clip: a callback is signed with the clip's
-- secret, and the links in `data.clip` are signed afresh at every attempt.
alter table webhook_outbox add column clip_id bigint;
