#include "api/openai/openai_errors.h"

namespace scribe::api::openai {

bool is_openai_path(const std::string& path) { return path == "/v1" || path.rfind("/v1/", 0) == 0; }

std::string error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 402:
      return "insufficient_quota";
    case 403:
      return "permission_error";
    case 409:
      return "conflict_error";
    case 429:
      return "rate_limit_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::optional<bool> should_retry(int status, const Json& error) {
  if (error.is_object() && error.contains("transcription_id")) return false;
  if (status >= 500 || status == 408 || status == 409) return std::nullopt;
  if (status == 429) {
    auto it = error.is_object() ? error.find("retry_after") : error.end();
    if (it != error.end() && it->is_number() && it->get<double>() <= 60) return std::nullopt;
    return false;
  }
  if (status >= 400) return false;
  return std::nullopt;
}

void decorate_error(Response& res) {
  if (res.status < 400 || res.stream || res.file) return;
  if (res.content_type.rfind("application/json", 0) != 0) return;
  Json body = Json::parse(res.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("error") || !body["error"].is_object()) return;
  Json& e = body["error"];
  if (!e.contains("type")) e["type"] = error_type(res.status);
  if (!e.contains("param")) e["param"] = e.contains("field") && e["field"].is_string() ? e["field"] : Json(nullptr);
  if (auto retry = should_retry(res.status, e)) res.set_header("x-should-retry", *retry ? "true" : "false");
  res.body = body.dump();
}

std::optional<Error> failed_transcription_error(const std::string& code, const std::string& message, int64_t id) {
  if (code == "no_speech") return std::nullopt;
  Json extras = {{"reason", code}, {"transcription_id", id}};
  if (code.rfind("media_", 0) == 0 || code == "file_too_long") {
    extras["field"] = "file";
    return Error("invalid_request", "the transcription failed: " + message, extras);
  }
  return Error("internal_error", "the transcription failed: " + message, extras);
}

}  // namespace scribe::api::openai
