#include "domain/oauth_redirect.h"

#include <algorithm>
#include <cctype>

#include "domain/limits.h"

namespace scribe::oauth {
namespace {

bool is_scheme_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'; }

bool is_loopback_host(std::string_view host) { return host == "127.0.0.1" || host == "[::1]" || host == "localhost"; }

bool is_loopback_http(const RedirectUri& u) {
  return u.scheme == "http" && u.has_authority && !u.has_userinfo && is_loopback_host(u.host);
}

}  // namespace

std::optional<RedirectUri> parse_redirect_uri(std::string_view uri) {
  if (uri.empty() || uri.size() > limits::kOAuthRedirectUriMaxLength) return std::nullopt;
  // Printable ASCII only: no spaces, controls or raw non-ASCII (RFC 3986 2).
  if (!std::all_of(uri.begin(), uri.end(), [](char c) { return c > 0x20 && c < 0x7f; })) return std::nullopt;
  RedirectUri u;
  const auto colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0 || !std::isalpha(static_cast<unsigned char>(uri[0])))
    return std::nullopt;
  if (!std::all_of(uri.begin(), uri.begin() + static_cast<std::ptrdiff_t>(colon), is_scheme_char)) return std::nullopt;
  u.scheme = std::string(uri.substr(0, colon));
  std::string_view rest = uri.substr(colon + 1);
  if (auto hash = rest.find('#'); hash != std::string_view::npos) {
    u.has_fragment = true;
    rest = rest.substr(0, hash);
  }
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    u.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  if (rest.substr(0, 2) == "//") {
    u.has_authority = true;
    rest = rest.substr(2);
    const auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    u.path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
      u.has_userinfo = true;
      authority = authority.substr(at + 1);
    }
    std::string_view host = authority, port;
    if (!authority.empty() && authority[0] == '[') {
      const auto close = authority.find(']');
      if (close == std::string_view::npos) return std::nullopt;
      host = authority.substr(0, close + 1);
      std::string_view after = authority.substr(close + 1);
      if (!after.empty()) {
        if (after[0] != ':') return std::nullopt;
        port = after.substr(1);
      }
    } else if (auto c = authority.find(':'); c != std::string_view::npos) {
      host = authority.substr(0, c);
      port = authority.substr(c + 1);
    }
    if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    if (!port.empty() && (port.size() > 5 || std::stoi(std::string(port)) > 65535)) return std::nullopt;
    u.host = std::string(host);
    u.port = std::string(port);
  } else {
    u.path = std::string(rest);
  }
  return u;
}

std::optional<std::string> redirect_registration_error(std::string_view uri) {
  auto u = parse_redirect_uri(uri);
  if (!u) return "must be an absolute URI of printable ASCII characters, at most 2048";
  if (u->has_fragment) return "must not have a fragment";
  if (u->has_userinfo) return "must not have userinfo";
  if (u->scheme == "https") {
    if (!u->has_authority || u->host.empty()) return "must name a host";
    return std::nullopt;
  }
  if (u->scheme == "http") {
    if (!u->has_authority || !is_loopback_host(u->host))
      return "http is allowed only on a loopback host (127.0.0.1, [::1], localhost); use https";
    return std::nullopt;
  }
  // A private-use scheme of a native app: reverse domain notation (RFC 8252
  // 7.1), so a dot. That also keeps out javascript:, data: and file:.
  if (u->scheme.find('.') == std::string::npos)
    return "must be https, loopback http, or a private-use scheme containing a dot (com.example.app:/cb)";
  return std::nullopt;
}

bool is_loopback_redirect(std::string_view uri) {
  auto u = parse_redirect_uri(uri);
  return u && is_loopback_http(*u);
}

bool all_loopback(const std::vector<std::string>& uris) {
  return !uris.empty() && std::all_of(uris.begin(), uris.end(), [](const auto& u) { return is_loopback_redirect(u); });
}

bool redirect_matches(const std::vector<std::string>& registered, std::string_view requested) {
  if (std::find(registered.begin(), registered.end(), requested) != registered.end()) {
    // Exactly registered, and registration refused fragments and userinfo;
    // a stored URI that would not pass today still fails here.
    return !redirect_registration_error(requested);
  }
  auto req = parse_redirect_uri(requested);
  if (!req || req->has_fragment || !is_loopback_http(*req)) return false;
  for (const auto& r : registered) {
    auto reg = parse_redirect_uri(r);
    if (!reg || !is_loopback_http(*reg) || reg->has_fragment) continue;
    // Everything but the port, compared as written.
    if (reg->host == req->host && reg->path == req->path && reg->query == req->query) return true;
  }
  return false;
}

std::string redirect_display_host(std::string_view uri) {
  auto u = parse_redirect_uri(uri);
  if (!u) return std::string(uri);
  return u->has_authority ? u->host : u->scheme;
}

std::string redirect_csp_source(std::string_view uri) {
  auto u = parse_redirect_uri(uri);
  if (!u) return "'none'";
  if (!u->has_authority) return u->scheme + ":";
  return u->scheme + "://" + u->host + (u->port.empty() ? "" : ":" + u->port);
}

}  // namespace scribe::oauth
