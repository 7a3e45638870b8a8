#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>

#include "commands/transcription_commands.h"
#include "domain/transcript_revision.h"

// Commands on transcript revisions (domain/transcript_revision.h). Both take
// the transcription stream's lock before reading, as its deletion does
// (transcription_commands.cpp remove()), so a revision is either refused as
// 404 or seen, and redacted, by the deletion; then they decide on the
// revision stream and append to it at the version read.
namespace scribe::commands {

struct SavedRevision {
  int64_t revision = 0;
};
// POST .../revisions: 404 when the transcription is not the caller's, 409
// not_ready unless completed, 400 for a body breaking revision::parse_draft's
// rules, 409 revision_conflict for a stale base_revision.
SavedRevision save_revision(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                            int64_t transcription_id, const Json& body);

struct UndoneRevision {
  int64_t revision = 0;            // the one withdrawn
  std::optional<int64_t> current;  // what is current now (nullopt: the recognized transcript)
};
// DELETE .../revisions/latest: 404 when the transcription is not the
// caller's or has no revision standing.
UndoneRevision undo_revision(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                             int64_t transcription_id);

// The transcription's deletion: its revisions' text leaves the log (ids and
// numbers stay). Runs in the deleting transaction, after its append.
void redact_revisions(pqxx::work& txn, int64_t transcription_id);

}  // namespace scribe::commands
