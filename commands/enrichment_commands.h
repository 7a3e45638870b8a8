#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "commands/transcription_commands.h"

// Commands on a completed transcription's enrichment.
namespace scribe::commands {

// POST .../timestamps/regenerate, in two steps around the (slow, pure)
// recomputation the caller does in between:
//  - check_regeneration: the transcription as it stands, refused exactly as
//    the append would be (404, 409 not_ready, 429 regen_limit_exceeded), so a
//    refused call computes nothing;
//  - record_regeneration: decides again on the stream as it is then and
//    appends PostingChaptersRegenerated, so two concurrent calls at the last
//    allowed count cannot both succeed. `attempt` is the one checked: a
//    transcription retried meanwhile refuses the stale cache (500, retry).
// Both return the state decided on; record_regeneration's regen_count is the
// new count.
transcription::State check_regeneration(pqxx::connection& conn, const Caller& caller, int64_t transcription_id);
transcription::State record_regeneration(const eventstore::EventStore& store, pqxx::connection& conn,
                                         const Caller& caller, int64_t transcription_id, int attempt,
                                         const std::optional<std::string>& refine_prompt, const Json& refs);

}  // namespace scribe::commands
