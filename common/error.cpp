#include "common/error.h"

#include "common/error_codes.h"

namespace scribe {

int status_for_code(const std::string& code) {
  const ErrorCodeInfo* info = find_error_code(code);
  return info ? info->status : 500;
}

Error::Error(std::string code, std::string message, Json extras, int status)
    : code_(std::move(code)),
      message_(std::move(message)),
      extras_(std::move(extras)),
      status_(status ? status : status_for_code(code_)) {
  if (!extras_.is_object()) extras_ = Json::object();
}

Error Error::invalid(const std::string& field, const std::string& message) {
  return Error("invalid_request", message, {{"field", field}});
}

Error Error::not_found(const std::string& what) { return Error("not_found", what + " not found"); }

}  // namespace scribe
