-- What the recognizer almost heard (speech/confusion_network.h): the
-- competing words of its lattice with their posteriors, keyed by time (not by
-- segment, so a revision of the text does not orphan them). Written by the
-- inline segments projection from the transcript artifact's `alternates`,
-- with the transcription's other transcript rows; cleared with them on a
-- retry or a deletion. Never shown as transcript text: ask
-- (api/ask_retrieval.cpp) and the opt-in heard search (api/heard_search.cpp)
-- read it, nothing else.
-- `lexeme` is the word as the segments' `terms` hold it (PostgreSQL's
-- English stem), null for a function word, which nothing looks up.
create table transcript_alternates (
  transcription_id bigint not null,
  account_id       bigint not null,
  start_ms         int not null,
  end_ms           int not null,
  word             text not null,
  lexeme           text,
  posterior        real not null
);
-- Library asks and searches: an account's alternates of a lexeme.
create index transcript_alternates_lexeme on transcript_alternates (account_id, lexeme) where lexeme is not null;
-- One transcription's, in time order (and its deletion).
create index transcript_alternates_transcription on transcript_alternates (transcription_id, start_ms);
