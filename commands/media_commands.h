#pragma once
#include <pqxx/pqxx>
#include <string>

#include "commands/transcription_commands.h"
#include "domain/media_playback.h"

// Commands on a transcription's media (domain/media_playback.h).
namespace scribe::commands {

// POST .../video: records that upload `upload_id` (the caller's, complete,
// probed as `video`) is the original video of transcription
// `transcription_id`, whose source is `source` (from its read model). 404
// unless the transcription is the caller's and not deleted; the rules of
// playback::check_added_video against the transcription's measured length
// (else the length it was created with). Appends TranscriptionVideoAdded at
// the version it read. The caller stores the file after this succeeds.
void add_video(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
               int64_t transcription_id, const std::string& source, const std::string& upload_id,
               const playback::Probe& video);

}  // namespace scribe::commands
