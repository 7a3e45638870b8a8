-- Word timings packed per segment, for GET /transcriptions/{id}/subtitles.
--
-- A 12-hour transcript has about 100,000 words. Reading them as 100,000 rows
-- of `words` took 65-290 ms on a 2-core machine, against a budget of 200 ms
-- for the whole export: the server produces 100,000 tuples (and, with some
-- plans, sorts them on disk), and the client converts them field by field.
-- The same words packed into one text value per segment are about 8,000 rows
-- and read in about 20 ms (bench/exports_benchmark.cpp). The `words` table
-- stays as it is, for the paged GET /transcriptions/{id}/words and as the
-- source of the packed form.
--
-- Format of `segments.packed_words`: the segment's words in `word_index`
-- order, each written as
--     <start_ms>,<end_ms>,<bytes of text>,<bytes of punctuation, -1 for null>:<text><punctuation>
-- with nothing between words. Lengths are in bytes, so any text (commas,
-- colons, digits, newlines) is read back exactly. Null when the segment has
-- no words. A word's speaker and segment are those of the segment holding
-- it, which is how projections/segments_projection.cpp writes `words`. The
-- reader is api/export_rows.cpp.
alter table segments add column packed_words text;

-- One word in the packed form.
create function scribe_packed_word(start_ms bigint, end_ms bigint, word text, punctuation text)
returns text language sql immutable parallel safe as $$
  select start_ms::text || ',' || end_ms::text || ',' || octet_length(word)::text || ','
      || coalesce(octet_length(punctuation), -1)::text || ':' || word || coalesce(punctuation, '')
$$;

-- The packed words of every segment of one transcription, from `words`. The
-- segments projection writes `packed_words` with this function and the
-- backfill below uses it too, so there is one encoder.
create function scribe_packed_words(p_transcription_id bigint)
returns table (segment_id bigint, packed_words text) language sql stable as $$
  select w.segment_id, string_agg(scribe_packed_word(w.start_ms, w.end_ms, w.text, w.punctuation), ''
                                  order by w.word_index)
    from words w
   where w.transcription_id = p_transcription_id
   group by w.segment_id
$$;

-- Transcripts completed before this migration.
update segments s
   set packed_words = p.packed_words
  from (select distinct transcription_id from words) t
 cross join lateral scribe_packed_words(t.transcription_id) p
 where s.transcription_id = t.transcription_id
   and s.id = p.segment_id;
