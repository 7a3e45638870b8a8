#include "api/oauth/wire.h"

#include <algorithm>

#include "common/text.h"

namespace scribe::api::oauth {

std::optional<OAuthParams> OAuthParams::form(const Request& req) {
  const std::string type = to_lower(req.header("content-type").value_or(""));
  const std::string media = std::string(trim(type.substr(0, type.find(';'))));
  if (media != "application/x-www-form-urlencoded") return std::nullopt;
  std::vector<std::pair<std::string, std::string>> items;
  if (!parse_urlencoded(req.body, items)) return std::nullopt;
  return OAuthParams(std::move(items));
}

std::optional<std::string> OAuthParams::one(std::string_view name) const {
  std::optional<std::string> found;
  for (const auto& [k, v] : items_) {
    if (k != name) continue;
    if (found) throw DuplicateParameter{std::string(name)};
    found = v;
  }
  // RFC 6749 3.1: a parameter sent without a value is treated as omitted.
  if (found && found->empty()) return std::nullopt;
  return found;
}

std::vector<std::string> OAuthParams::all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : items_)
    if (k == name && !v.empty()) out.push_back(v);
  return out;
}

std::string OAuthParams::encode() const {
  std::string out;
  for (const auto& [k, v] : items_) {
    if (!out.empty()) out += '&';
    out += percent_encode(k) + "=" + percent_encode(v);
  }
  return out;
}

void no_store(Response& r) {
  r.set_header("Cache-Control", "no-store");
  r.set_header("Pragma", "no-cache");
}

Response oauth_error(int status, std::string_view error, std::string_view description) {
  Response r = Response::json(status, {{"error", error}, {"error_description", description}});
  no_store(r);
  return r;
}

std::string with_query(std::string_view uri, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string base(uri);
  std::string fragment;
  // Registered redirect URIs have no fragment; kept apart regardless.
  if (auto hash = base.find('#'); hash != std::string::npos) {
    fragment = base.substr(hash);
    base.resize(hash);
  }
  char sep = base.find('?') == std::string::npos ? '?' : '&';
  if (!base.empty() && (base.back() == '?' || base.back() == '&')) sep = '\0';
  for (const auto& [k, v] : params) {
    if (sep) base += sep;
    base += percent_encode(k) + "=" + percent_encode(v);
    sep = '&';
  }
  return base + fragment;
}

Response redirect(const std::string& location, int status) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.set_header("Location", location);
  r.set_header("Cache-Control", "no-store");
  r.set_header("Referrer-Policy", "no-referrer");
  return r;
}

std::optional<std::string> cookie(const Request& req, std::string_view name) {
  auto header = req.header("cookie");
  if (!header) return std::nullopt;
  std::string_view rest = *header;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    std::string_view pair = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos || trim(pair.substr(0, eq)) != name) continue;
    std::string_view value = trim(pair.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return std::string(value);
  }
  return std::nullopt;
}

std::string set_cookie(std::string_view name, std::string_view value, std::string_view same_site, bool secure,
                       int max_age_seconds) {
  std::string c =
      std::string(name) + "=" + std::string(value) + "; Path=/oauth; HttpOnly; SameSite=" + std::string(same_site);
  if (secure) c += "; Secure";
  if (max_age_seconds >= 0) c += "; Max-Age=" + std::to_string(max_age_seconds);
  return c;
}

}  // namespace scribe::api::oauth
