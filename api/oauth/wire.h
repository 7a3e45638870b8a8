#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/http.h"

// The authorization server's wire pieces shared by its endpoints
// (docs/oauth_wire_rules.md): parameters that may not repeat, RFC 6749 JSON
// errors, redirects carrying a response, and cookies.
namespace scribe::api::oauth {

// Request parameters (a query or a form body). RFC 6749 3.1/3.2: a
// parameter sent twice is invalid_request; `resource` (RFC 8707) may repeat.
class OAuthParams {
 public:
  explicit OAuthParams(std::vector<std::pair<std::string, std::string>> items) : items_(std::move(items)) {}
  // The form body of `req` (application/x-www-form-urlencoded); nullopt when
  // the content type is another or the body is not valid percent-encoding.
  static std::optional<OAuthParams> form(const Request& req);
  // The one value of `name`, nullopt when absent or empty; throws
  // DuplicateParameter when it is given more than once.
  std::optional<std::string> one(std::string_view name) const;
  std::vector<std::string> all(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }
  // The parameters encoded again as a query (for a hidden field that brings
  // an authorization request through the sign-in and consent forms).
  std::string encode() const;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

struct DuplicateParameter {
  std::string name;
};

// An RFC 6749 5.2 / RFC 7591 3.2.2 / RFC 7009 2.2.1 error body, with
// Cache-Control: no-store (token endpoint responses carry it, errors too).
Response oauth_error(int status, std::string_view error, std::string_view description);
// Cache-Control: no-store and Pragma: no-cache (RFC 6749 5.1).
void no_store(Response& r);

// `uri` with `params` added to its query (RFC 6749 4.1.2: the response's
// parameters are added to the redirect URI, keeping its own query).
std::string with_query(std::string_view uri, const std::vector<std::pair<std::string, std::string>>& params);
// A 302 to `location`.
Response redirect(const std::string& location, int status = 302);

// The value of cookie `name` in the request's Cookie header, or nullopt.
std::optional<std::string> cookie(const Request& req, std::string_view name);
// A Set-Cookie value for the /oauth pages: Path=/oauth, HttpOnly, the given
// SameSite, Secure when `secure`; Max-Age when `max_age_seconds` >= 0.
std::string set_cookie(std::string_view name, std::string_view value, std::string_view same_site, bool secure,
                       int max_age_seconds);

}  // namespace scribe::api::oauth
