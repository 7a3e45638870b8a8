-- What the web console's player is given for a transcription's media
-- (GET /api/v1/transcriptions/{id}/media; domain/media_playback.h).
-- Operational state, like clip_leases: one row per stored source of a
-- transcription (`upload`: the uploaded file; `video`: the original video
-- added to an upload, or a link's video fetched for clips; `audio`: the
-- audio track kept of a link or a realtime session), saying whether a browser
-- plays it as it is (`original`) or a rendition is `queued`, `ready` or
-- `failed`. The rendition itself is an object under the transcription's
-- prefix, deleted with it. Rows of a deleted transcription are left behind
-- (nothing reads them: every read joins transcriptions) and removed by the
-- rendition worker's sweep; attaching another video deletes the `video` row.
create table media_renditions (
  transcription_id bigint not null,
  source           text   not null,  -- upload | video | audio
  state            text   not null,  -- original | queued | ready | failed
  kind             text   not null,  -- audio | video
  content_type     text   not null,  -- of what is served: the original, or the rendition once ready
  duration_seconds double precision,
  error            text,
  owner            text,             -- the rendition worker holding the lease, while queued
  lease_until      timestamptz,
  claims           int    not null default 0,
  updated_at       timestamptz not null default now(),
  primary key (transcription_id, source)
);
create index media_renditions_queued on media_renditions (updated_at) where state = 'queued';
