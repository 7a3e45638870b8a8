#pragma once
#include <string>

#include "commands/realtime_commands.h"
#include "common/config.h"
#include "common/json.h"

namespace scribe::api::realtime {

// The body of a created or resumed session (201): its ids, the effective
// cap, the single-use ticket and where to use it.
Json ticket_view(const Config& config, const commands::SessionTicket& t);

// The stream's URL on this server: the public base URL with ws(s) for
// http(s), then `path`.
std::string websocket_url(const Config& config, const std::string& path);

}  // namespace scribe::api::realtime
