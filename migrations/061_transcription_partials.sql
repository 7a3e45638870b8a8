-- The draft text of running transcriptions: each piece of speech the worker
-- recognized, written in recording order as soon as every piece before it is
-- done (domain/transcript_draft.h), for the streams of
-- POST /v1/audio/transcriptions, which read it when the worker's
-- NOTIFY scribe_transcription_partials (payload: the transcription's id)
-- wakes them. Operational, not built from the log: a transcription's rows go
-- when it is deleted or retried (the transcriptions projection), and
-- housekeeping deletes them 10 minutes after it completed or failed
-- (projections/transcription_partials.h).
create table transcription_partials (
  transcription_id bigint not null,
  seq int not null,
  start_seconds double precision not null,
  end_seconds double precision not null,
  text text not null,
  primary key (transcription_id, seq)
);
