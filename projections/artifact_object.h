#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "common/json.h"

namespace scribe::projections {

// The stored object an event's artifact reference ({key, sha256}) names, or
// nullopt when it is gone or its checksum differs (logged with `what`, e.g.
// "transcript artifact"). Projections then write no rows from it, and reads
// report the artifact missing rather than partial or wrong content.
std::optional<std::string> load_artifact_object(int64_t transcription_id, const Json& ref, const std::string& what);

}  // namespace scribe::projections
