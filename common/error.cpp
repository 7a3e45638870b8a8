#include "common/error.h"

#include <unordered_map>

namespace scribe {

int status_for_code(const std::string& code) {
  static const std::unordered_map<std::string, int> table = {
      {"unauthenticated", 401},         {"invalid_api_key", 401},
      {"forbidden", 403},               {"entitlement_required", 403},
      {"scope_forbidden", 403},         {"not_found", 404},
      {"not_ready", 409},               {"invalid_request", 400},
      {"unsupported_pipeline", 400},    {"unsupported_language", 400},
      {"addon_not_supported", 400},     {"video_private", 400},
      {"video_unavailable", 400},       {"video_unavailable_probe", 400},
      {"video_members_only", 400},      {"video_age_restricted", 400},
      {"probe_proxy_auth_quota", 503},  {"probe_proxy_connectivity", 503},
      {"probe_runtime_misconfigured", 503}, {"source_busy", 503},
      {"insufficient_funds", 402},      {"max_charge_exceeded", 402},
      {"spend_cap_exceeded", 402},      {"rate_limited", 429},
      {"qna_quota_exceeded", 429},      {"queue_full", 429},
      {"internal_error", 500},
  };
  auto it = table.find(code);
  return it == table.end() ? 500 : it->second;
}

Error::Error(std::string code, std::string message, Json extras, int status)
    : code_(std::move(code)), message_(std::move(message)), extras_(std::move(extras)),
      status_(status ? status : status_for_code(code_)) {
  if (!extras_.is_object()) extras_ = Json::object();
}

Error Error::invalid(const std::string& field, const std::string& message) {
  return Error("invalid_request", message, {{"field", field}});
}

Error Error::not_found(const std::string& what) { return Error("not_found", what + " not found"); }

}  // namespace scribe
