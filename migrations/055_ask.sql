-- Ask (POST .../ask and POST /api/v1/ask): the retrieval index over segments
-- and the read model of saved Q&A entries.

-- BM25 retrieval. Each segment's lexemes (PostgreSQL's English snowball
-- stemmer, its stop words removed) with their positions, so that a term's
-- frequency in a segment and the segment's length are read from the row. A
-- generated column, so rebuilds, retries and deletions of search_segments keep
-- it without code of their own, and rows written before this migration get it
-- here. The index is (account_id, terms): btree_gin lets one GIN index answer
-- "this account's segments holding any of these lexemes" (the library ask),
-- which is a posting-list walk, not a scan of every segment.
create extension if not exists btree_gin;
alter table search_segments add column terms tsvector
  generated always as (to_tsvector('english'::regconfig, text)) stored;
create index search_segments_terms on search_segments using gin (account_id, terms);

-- Saved Q&A entries (source 'user'), written by the inline `asks` projection
-- (projections/asks_projection.cpp) from QuestionAnswered and removed by
-- QuestionRedacted and by the deletion or retry of the transcription asked
-- about. transcription_id is null for a library ask. citations keeps the
-- response's citation objects ({marker, section_id, transcription_id, title,
-- start_ms, quote}); the URL is made when read.
create table asks (
  id               bigint primary key,
  account_id       bigint not null,
  transcription_id bigint,
  question         text not null,
  answer           text not null,
  citations        jsonb not null,
  model            text not null,
  asked_at         timestamptz not null
);
create index asks_transcription on asks (transcription_id, asked_at, id) where transcription_id is not null;
create index asks_account on asks (account_id, id);

-- Ids of asked entries. System Q&A entries have ids transcription_id * 100 +
-- index (stable across rebuilds, like chapters); asked entries start far
-- above any of those, so an id names one entry of either kind.
create sequence ask_ids start with 1000000000000000;

-- Per completed transcription, what BM25 needs of the collection: its
-- segments and their lexemes (counted with repeats). Written by the search
-- projection beside search_segments; a library ask sums the account's rows
-- instead of reading a million segments.
create table search_stats (
  transcription_id bigint primary key,
  account_id       bigint not null,
  segments         bigint not null,
  lexemes          bigint not null
);
create index search_stats_account on search_stats (account_id);
insert into search_stats (transcription_id, account_id, segments, lexemes)
select transcription_id, min(account_id), count(*), coalesce(sum(length(terms)), 0)
from search_segments group by transcription_id;
