#pragma once
#include <cstdint>
#include <pqxx/pqxx>
#include <vector>

#include "domain/transcript_draft.h"

// The `transcription_partials` table (migration 061): the draft text of a
// running transcription, one row per piece of speech with text, written by
// the worker in recording order (domain/transcript_draft.h) and read by the
// streams of POST /v1/audio/transcriptions, in any process: each write
// NOTIFYs kChannel with the transcription's id once it commits.
//
// Not built from the log and never rebuilt. A transcription's rows are
// deleted with it and when it is retried (the transcriptions projection, in
// the transaction of that event), and by sweep() once it has been finished
// for a while; they are the recognizer's words, so they never outlive the
// transcription by more than that.
namespace scribe::projections::partials {

inline constexpr const char* kChannel = "scribe_transcription_partials";

// Records `pieces` (released in order; their index is the row's seq) while
// the transcription is processing, and notifies kChannel, in one
// transaction. Pieces without text are not stored. A piece recorded again (a
// job taken over after a crash decodes it again) replaces its row. Nothing
// is written for a transcription that is no longer processing.
void record(pqxx::connection& conn, int64_t transcription_id, const std::vector<draft::Piece>& pieces);

// The recorded pieces after piece `after` (-1: all), in recording order.
std::vector<draft::Piece> read_after(pqxx::transaction_base& txn, int64_t transcription_id, int after);

// Deletes the transcription's rows (it was deleted or retried).
void clear(pqxx::transaction_base& txn, int64_t transcription_id);

// Deletes the rows of transcriptions that completed or failed more than
// `keep_seconds` ago, or that no longer exist; at most 1,000 transcriptions'
// rows a call. Returns the rows deleted.
int sweep(pqxx::connection& conn, int keep_seconds);

}  // namespace scribe::projections::partials
