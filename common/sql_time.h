#pragma once

// SQL that renders a timestamp column as ISO 8601 text in UTC, the form the
// API shows and the event log carries (2026-11-22T10:00:00.000Z, like
// to_iso8601 in common/time.h). One definition for every statement, so that
// a precision cannot drift between two copies of the format.
//
// Macros, not functions: statements are string literals (db::Statement
// keeps a const char*) joined at compile time, and the rendering stays an
// inline to_char that PostgreSQL evaluates as cheaply as before. `col` must
// be a string literal too: SCRIBE_SQL_ISO_MS("t.created_at"),
// SCRIBE_SQL_ISO_US("now()").

#define SCRIBE_SQL_ISO_(col, seconds) "to_char(" col " at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:" seconds "\"Z\"')"

// Milliseconds, as the HTTP API shows times: 2026-11-22T10:00:00.123Z.
#define SCRIBE_SQL_ISO_MS(col) SCRIBE_SQL_ISO_(col, "SS.MS")
// Microseconds, PostgreSQL's full precision: the event log's recorded_at,
// and values compared exactly after a round trip through text.
#define SCRIBE_SQL_ISO_US(col) SCRIBE_SQL_ISO_(col, "SS.US")
// Whole seconds, for people reading the admin CLI: 2026-11-22T10:00:00Z.
#define SCRIBE_SQL_ISO_S(col) SCRIBE_SQL_ISO_(col, "SS")
