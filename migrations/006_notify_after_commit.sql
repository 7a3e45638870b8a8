-- A NOTIFY inside the appending transaction takes a cluster-wide lock that is
-- held until the commit is flushed, so every append committed one at a time
-- (bench/README.md measured 32 writers slower than one). Appenders now notify
-- in a separate statement after their commit (EventStore::commit), which
-- writes no WAL; subscribers also poll, so an append made without it (psql) is
-- still seen within 200 ms.
drop trigger events_notify on events;
drop function scribe_events_notify();

-- The rate limiter is now one statement in api/rate_limiter.cpp.
drop function scribe_rate_limit_take(text, int, bigint);
