-- Two-character search queries. The trigram index of 008 cannot answer a
-- pattern with no whole trigram, so `q` of two characters scanned every
-- segment of the account (1.3 s over 1,000,000 segments for a rare pair).
-- This index holds, per segment, the distinct two-character substrings of
-- lower(text). ILIKE on a UTF-8 database compares lower() of both sides, so
-- for a `q` whose lower() is two characters long, "text ILIKE '%q%'" holds
-- exactly when scribe_bigrams(text) contains lower(q), and the search asks
-- that of this index instead of the ILIKE (api/search_query.cpp).
-- Computing the array costs about 0.1 ms a row, so it must never become a
-- filter evaluated row by row: the declared cost makes every plan with it
-- go through the index. Pairs found in most segments are answered without
-- it (api/search_query.cpp). (Numbered after 050 so that migrations keep the
-- order they were written in.)
create function scribe_bigrams(t text) returns text[]
language sql immutable strict parallel safe cost 100000 as $$
  select coalesce(array_agg(distinct substr(s.l, i, 2)), '{}')
  from (select lower(t) as l) s, generate_series(1, length(s.l) - 1) i
$$;

create index search_segments_text_bigrams on search_segments using gin (scribe_bigrams(text));
-- As for the text column: a larger sample tells rare pairs from common ones,
-- which chooses between this index and the account's ordering index.
alter index search_segments_text_bigrams alter column 1 set statistics 1000;
