-- Transcript revisions (domain/transcript_revision.h): a person's corrections
-- of a completed transcription, kept as a layer over the recognized
-- transcript. Written by the inline `revisions` projection
-- (projections/revisions_projection.cpp) from the stream
-- `revisions-<transcription_id>`: a row per revision still standing (an undo
-- deletes the latest row; the one before, or the recognized transcript, is
-- current again), all of a transcription's rows go with its deletion.
-- `cues` is the revision's cues as saved, [{id, start_ms, end_ms, text,
-- speaker}] in order; `id` is the cue's search segment id (drawn from
-- segment_ids, or the recognized segment's when the cue is unedited).
create table transcript_revisions (
  transcription_id bigint not null,
  revision         int not null,
  account_id       bigint not null,
  base_revision    int,
  cue_count        int not null,
  cues             jsonb not null,
  speaker_names    jsonb not null,
  created_at       timestamptz not null,
  primary key (transcription_id, revision)
);
