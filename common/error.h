#pragma once
#include <exception>
#include <string>

#include "common/json.h"

namespace scribe {

// The one error type. `code` is a stable code from the spec's Errors table;
// the HTTP status follows from it (or is given, for the few statuses the table
// leaves open, such as 405 and 413). The API renders it as the envelope
// {error: {code, message, request_id, doc_url, ...extras}}; the CLI prints it.
class Error : public std::exception {
 public:
  Error(std::string code, std::string message, Json extras = Json::object(), int status = 0);

  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& code() const { return code_; }
  const std::string& message() const { return message_; }
  const Json& extras() const { return extras_; }
  int http_status() const { return status_; }

  // 400 invalid_request naming the offending field.
  static Error invalid(const std::string& field, const std::string& message);
  static Error not_found(const std::string& what);

 private:
  std::string code_;
  std::string message_;
  Json extras_;
  int status_;
};

// The HTTP status the spec assigns to a code (500 for unknown codes).
int status_for_code(const std::string& code);

}  // namespace scribe
