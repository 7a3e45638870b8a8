#pragma once
#include <string>

#include "api/http.h"

// What the AssemblyAI alias's HTTP side needs of ApiApp
// (docs/realtime_assemblyai_wire.md): its SDK sends the API key bare in
// Authorization, and reads an error body's `error` as a string.
namespace scribe::api::realtime {

bool is_assemblyai_path(const std::string& path);  // /v3/...
// `Authorization: key_...` becomes `Bearer key_...` (a header with a scheme
// is left as it is).
void normalize_credential(Request& req);
// An error in the spec's envelope becomes {"error": message} (the code stays
// in X-Error-Code; the status is unchanged).
void decorate_error(Response& res);

}  // namespace scribe::api::realtime
