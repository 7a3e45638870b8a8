#pragma once
#include <string>

#include "api/http.h"
#include "common/error.h"
#include "common/json.h"

// Errors on the OpenAI-compatible surface (/v1/...). The body stays the
// spec's envelope and gains the fields OpenAI's clients read (the Error
// schema of openai/openai-openapi: message, type, param, code), so it is the
// union {error: {code, message, type, param, request_id, doc_url, ...}}; our
// stable code is `code`. The `x-should-retry` header, which the official SDKs
// obey before their own status rules (openai-node src/client.ts
// shouldRetry), stops retries of what cannot succeed by repeating.
namespace scribe::api::openai {

bool is_openai_path(const std::string& path);

// OpenAI's error `type` for a status: 400, 404, 405, 413, 414, 415, 431
// invalid_request_error; 401 authentication_error; 402 insufficient_quota;
// 403 permission_error; 409 conflict_error; 429 rate_limit_error; 5xx
// server_error.
std::string error_type(int status);

// Whether a client should repeat the request unchanged: nullopt leaves the
// client to its status rules (the SDK retries 408, 409, 429 and 5xx), false
// says no. No: every 4xx but 408, 409 and a 429 whose retry_after is at most
// 60 s (the per-minute limit; fair use and other day-long waits are not
// worth an automatic retry), and an error that reports a failed
// transcription (it carries transcription_id: a retry returns the same one).
std::optional<bool> should_retry(int status, const Json& error);

// Adds type, param (error.field, else null) and x-should-retry to an error
// envelope response; leaves any other response as it is.
void decorate_error(Response& res);

// What answers a transcription that failed with the pipeline's `code`:
// nullopt for no_speech (OpenAI's clients get silence as an empty
// transcript); 400 invalid_request naming file when the recording was the
// cause (media_*, file_too_long); else 500 internal_error. Either carries
// reason (the code) and transcription_id.
std::optional<Error> failed_transcription_error(const std::string& code, const std::string& message, int64_t id);

}  // namespace scribe::api::openai
