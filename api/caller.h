#pragma once
#include "api/router.h"
#include "commands/transcription_commands.h"

namespace scribe::api {

// The authenticated caller as commands see it: account, key, the key's
// monthly cap, and the metadata every event it causes carries.
commands::Caller caller_of(const RequestContext& ctx);

}  // namespace scribe::api
