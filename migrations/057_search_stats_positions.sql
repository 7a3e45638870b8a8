-- search_stats.lexemes counted distinct lexemes per segment (length() of a
-- tsvector), while BM25's document length is its words with repeats, which
-- is what retrieval counts per segment (the positions of each lexeme). Count
-- positions, as the search projection now writes it.
update search_stats st
set lexemes = coalesce((select sum(cardinality(u.positions))
                        from search_segments s, unnest(s.terms) u
                        where s.transcription_id = st.transcription_id), 0);
