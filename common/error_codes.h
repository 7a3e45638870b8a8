#pragma once
#include <span>
#include <string_view>

namespace scribe {

// The spec's Errors table, in one place: each stable code with its HTTP
// status, what it means and what a client should do (the spec's retry
// rules). status_for_code reads the status from here, and GET /docs/errors
// renders the page that every envelope's doc_url points into, so the two can
// never disagree.
struct ErrorCodeInfo {
  std::string_view code;
  int status;
  std::string_view meaning;
  std::string_view what_to_do;
};

std::span<const ErrorCodeInfo> error_codes();

// The entry for `code`, or nullptr for a code outside the table.
const ErrorCodeInfo* find_error_code(std::string_view code);

}  // namespace scribe
