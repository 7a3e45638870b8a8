#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "api/realtime/messages.h"
#include "api/router.h"

// What the native stream and the AssemblyAI alias share: redeeming the
// ticket, claiming the session for this connection and accepting the
// upgrade with a live session in the asked dialect (stream_handler.cpp).
namespace scribe::api::realtime {

struct StreamParams {
  Dialect dialect = Dialect::Native;
  std::optional<int> last_turn_order;  // a resuming client's last final
  std::optional<int> end_of_turn_silence_ms;
  std::optional<bool> partials;
};

// The credential of a stream: the `query_name` query parameter, else the
// Authorization header's Bearer token, else the header bare (AssemblyAI's
// SDK sends it so).
std::optional<std::string> bearer_or_query(const Request& req, std::string_view query_name);

// Redeems `ticket` and answers the upgrade: a live session, or an accepted
// upgrade that sends one Error and closes with the refusal's code. A request
// that is not an upgrade is 426.
Response accept_stream(RequestContext& ctx, const std::string& ticket, const StreamParams& params);

StreamParams native_params(const Request& req);

// An accepted upgrade whose only message is a refusal: one Error with
// `code`, then the close `close_code` (ours; the dialect's own number on
// the wire).
Response refusal(const std::string& code, const std::string& message, int close_code, Dialect d);

}  // namespace scribe::api::realtime
