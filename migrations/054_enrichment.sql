-- Enrichment read models, written by the inline `enrichment` projection
-- (projections/enrichment_projection.cpp) in the completing transaction from
-- the enrichment artifact the TranscriptionCompleted event references, and
-- from the posting-chapters objects of PostingChaptersRegenerated.

-- One row per completed transcription: whether its enrichment could be read
-- ('ok'), was produced but cannot be read now ('missing'), or was never
-- produced (the worker's enrichment failed, or the transcription completed
-- before enrichment existed: 'failed'), and the posting-chapters cache.
create table enrichments (
  transcription_id     bigint primary key,
  state                text not null check (state in ('ok', 'missing', 'failed')),
  method               text,
  generated_at         timestamptz,
  posting              jsonb,
  posting_generated_at timestamptz,
  posting_method       text,
  regen_count          integer not null default 0
);

-- Topic sections. The id is the section's first segment's id: unique,
-- and the same after a rebuild.
create table sections (
  id               bigint primary key,
  transcription_id bigint not null,
  section_index    integer not null,
  title            text not null,
  summary          text not null,
  start_ms         bigint not null,
  end_ms           bigint not null,
  segment_count    integer not null,
  unique (transcription_id, section_index)
);

-- Chapters and acts (same wire shape, kind tells them apart).
create table chapters (
  transcription_id bigint not null,
  kind             text not null check (kind in ('chapter', 'act')),
  chapter_index    integer not null,
  title            text not null,
  summary          text not null,
  start_ms         bigint not null,
  end_ms           bigint not null,
  primary key (transcription_id, kind, chapter_index)
);

-- System Q&A (source 'system'); citations are [{title, start_ms}].
create table qna (
  transcription_id bigint not null,
  source           text not null,
  qna_index        integer not null,
  question         text not null,
  answer           text not null,
  citations        jsonb not null,
  answer_citations jsonb not null,
  primary key (transcription_id, source, qna_index)
);
