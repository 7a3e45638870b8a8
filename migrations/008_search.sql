-- Library-wide segment search (GET /api/v1/search and
-- GET /api/v1/transcriptions/{id}/search): the `search_segments` read model,
-- written inline by projections/search_projection.cpp in the transaction that
-- completes a transcription, so a transcription is searchable as soon as it
-- reads as completed.

-- pg_trgm is a trusted extension from PostgreSQL 13 on: a database owner (or
-- any role with CREATE on the database) may create it without superuser. The
-- migrator creates it too, before any migration runs; this line keeps the file
-- self-contained.
create extension if not exists pg_trgm;

-- One row per segment of a completed, undeleted transcription. The account and
-- the transcription's creation time are copied from `transcriptions` so that
-- tenant filtering and the spec's order (newest transcription first, then
-- start_ms, then segment id) are answered from this table's own indexes. The
-- title, source and link are read from `transcriptions` for the returned page
-- only, so they never go stale here.
create table search_segments (
  segment_id               bigint primary key,
  transcription_id         bigint not null,
  account_id               bigint not null,
  transcription_created_at timestamptz not null,
  start_ms                 bigint not null,
  end_ms                   bigint not null,
  speaker                  text,
  text                     text   not null
);

-- Substring matching: ILIKE '%...%' on `text` is answered by this trigram
-- index (pg_trgm folds case when it extracts trigrams, so one index serves
-- case-insensitive matching). Patterns without a whole trigram (q of two
-- characters) cannot use it and are answered through the ordering index.
create index search_segments_text_trgm on search_segments using gin (text gin_trgm_ops);
-- The library order per account: common substrings are answered by walking
-- this index and stopping after a page.
create index search_segments_account_order
  on search_segments (account_id, transcription_created_at desc, transcription_id desc, start_ms, segment_id);
-- Per-transcription search, and the deletes of a retry or a deletion.
create index search_segments_transcription on search_segments (transcription_id, start_ms, segment_id);

-- Pattern selectivity is estimated from the column's histogram; a larger
-- sample tells rare substrings from common ones more reliably, which is what
-- chooses between the two indexes above.
alter table search_segments alter column text set statistics 1000;

-- Transcriptions completed before this migration become searchable at once:
-- the same rows a rebuild of the projection would write.
insert into search_segments (segment_id, transcription_id, account_id, transcription_created_at, start_ms, end_ms,
                             speaker, text)
select s.id, s.transcription_id, t.account_id, t.created_at, s.start_ms, s.end_ms, s.speaker, s.text
from segments s
join transcriptions t on t.id = s.transcription_id
where t.status = 'completed';
