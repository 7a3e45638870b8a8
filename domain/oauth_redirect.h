#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Redirect URIs of OAuth clients (OAuth 2.1 section 2.3 and 7.12, RFC 8252
// section 7; docs/oauth_wire_rules.md). A client may register:
//   - https URIs with a host (no userinfo, no fragment);
//   - http URIs on a loopback host: 127.0.0.1, [::1] or localhost (native
//     apps listening on an ephemeral port);
//   - private-use schemes containing a dot (com.example.app:/cb).
// A request's redirect_uri matches a registered one when the two strings are
// equal, except that a loopback http URI may name any port (RFC 8252 7.3).
// Nothing is normalized: case, an added path, a trailing slash, another port
// on https or userinfo make a different URI.
namespace scribe::oauth {

struct RedirectUri {
  std::string scheme;  // as written
  bool has_authority = false;
  bool has_userinfo = false;
  std::string host;  // as written; an IPv6 literal keeps its brackets
  std::string port;  // digits as written, or empty
  std::string path;
  std::optional<std::string> query;
  bool has_fragment = false;
};

// Splits an absolute URI (RFC 3986 section 3); nullopt when it is not one or
// has characters outside printable ASCII, or a malformed port.
std::optional<RedirectUri> parse_redirect_uri(std::string_view uri);

// Why `uri` may not be registered, or nullopt when it may.
std::optional<std::string> redirect_registration_error(std::string_view uri);

bool is_loopback_redirect(std::string_view uri);
// True when there is at least one URI and every one is loopback http: any
// local program can receive such a client's codes, so its consent is asked
// every time and the page warns.
bool all_loopback(const std::vector<std::string>& uris);

// Whether `requested` is one of `registered` under the rules above.
bool redirect_matches(const std::vector<std::string>& registered, std::string_view requested);

// What the consent page shows as the redirect's host: the host of an http(s)
// URI, the scheme of a private-use one.
std::string redirect_display_host(std::string_view uri);
// The source a Content-Security-Policy form-action must allow for the
// redirect after the consent form: "scheme://host[:port]" or "scheme:".
std::string redirect_csp_source(std::string_view uri);

}  // namespace scribe::oauth
