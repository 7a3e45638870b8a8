#include "domain/oauth_client.h"

#include <algorithm>

#include "common/text.h"
#include "domain/limits.h"
#include "domain/oauth_redirect.h"

namespace scribe::oauth {
namespace {

MetadataError client_error(std::string description) { return {"invalid_client_metadata", std::move(description)}; }

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A list of strings from `body[key]`, each one of `allowed`; `fallback` when absent.
std::optional<std::vector<std::string>> string_set(const Json& body, const char* key,
                                                   const std::vector<std::string>& allowed,
                                                   std::vector<std::string> fallback, std::string& why) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_array() || it->empty()) {
    why = std::string(key) + " must be a non-empty array of strings";
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string() || !contains(allowed, v.get<std::string>())) {
      why = std::string(key) + " may only contain " + Json(allowed).dump();
      return std::nullopt;
    }
    if (!contains(out, v.get<std::string>())) out.push_back(v.get<std::string>());
  }
  return out;
}

MetadataResult check_common(const Json& body) {
  if (!body.is_object()) return client_error("the client metadata must be a JSON object");
  ClientMetadata m;

  auto uris = body.find("redirect_uris");
  if (uris == body.end() || !uris->is_array() || uris->empty())
    return MetadataError{"invalid_redirect_uri", "redirect_uris must be a non-empty array of strings"};
  if (uris->size() > static_cast<std::size_t>(limits::kOAuthMaxRedirectUris))
    return MetadataError{"invalid_redirect_uri",
                         "at most " + std::to_string(limits::kOAuthMaxRedirectUris) + " redirect_uris"};
  for (const auto& u : *uris) {
    if (!u.is_string()) return MetadataError{"invalid_redirect_uri", "redirect_uris must be strings"};
    const auto uri = u.get<std::string>();
    if (auto why = redirect_registration_error(uri))
      return MetadataError{"invalid_redirect_uri", "redirect_uri " + Json(uri).dump() + " " + *why};
    if (!contains(m.redirect_uris, uri)) m.redirect_uris.push_back(uri);
  }

  // Public clients only: no secret is issued or accepted (OAuth 2.1 2.1; the
  // token endpoint takes client_id in the body).
  if (auto it = body.find("token_endpoint_auth_method"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || it->get<std::string>() != "none")
      return client_error("token_endpoint_auth_method must be \"none\": only public clients are supported");
  }

  std::string why;
  auto grants = string_set(body, "grant_types", {"authorization_code", "refresh_token"},
                           {"authorization_code", "refresh_token"}, why);
  if (!grants) return client_error(why);
  if (!contains(*grants, "authorization_code")) return client_error("grant_types must include authorization_code");
  m.grant_types = *grants;
  auto responses = string_set(body, "response_types", {"code"}, {"code"}, why);
  if (!responses) return client_error(why);
  m.response_types = *responses;

  if (auto it = body.find("application_type"); it != body.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "web" && *it != "native"))
      return client_error("application_type must be \"web\" or \"native\"");
    m.application_type = it->get<std::string>();
  }
  if (auto it = body.find("client_name"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return client_error("client_name must be a string");
    const auto name = it->get<std::string>();
    if (!is_valid_utf8(name) || has_control_chars(name) ||
        utf8_length(name) > static_cast<std::size_t>(limits::kOAuthClientNameMaxChars))
      return client_error("client_name must be at most " + std::to_string(limits::kOAuthClientNameMaxChars) +
                          " characters, without control characters");
    if (!trim(name).empty()) m.client_name = name;
  }
  if (auto it = body.find("scope"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return client_error("scope must be a string");
    m.scope = it->get<std::string>();
  }
  return m;
}

}  // namespace

Json ClientMetadata::to_json() const {
  Json j = {{"redirect_uris", redirect_uris},
            {"grant_types", grant_types},
            {"response_types", response_types},
            {"token_endpoint_auth_method", "none"},
            {"application_type", application_type}};
  if (client_name) j["client_name"] = *client_name;
  if (scope) j["scope"] = *scope;
  return j;
}

MetadataResult check_registration(const Json& body) { return check_common(body); }

MetadataResult check_metadata_document(const Json& doc, std::string_view url) {
  if (!doc.is_object()) return client_error("the client metadata document must be a JSON object");
  auto id = doc.find("client_id");
  if (id == doc.end() || !id->is_string() || id->get<std::string>() != url)
    return client_error("the document's client_id must equal its URL exactly");
  // draft-ietf-oauth-client-id-metadata-document: no shared secret.
  if (doc.contains("client_secret") || doc.contains("client_secret_expires_at"))
    return client_error("a client metadata document must not carry a client_secret");
  return check_common(doc);
}

bool is_metadata_document_url(std::string_view client_id) {
  if (client_id.size() > limits::kOAuthClientIdMaxLength) return false;
  auto u = parse_redirect_uri(client_id);
  if (!u || u->scheme != "https" || !u->has_authority || u->host.empty() || u->has_userinfo || u->has_fragment)
    return false;
  if (u->path.empty() || u->path == "/") return false;
  // No dot segments: the URL must be the document's one spelling.
  for (std::size_t start = 1; start <= u->path.size();) {
    const auto end = std::min(u->path.find('/', start), u->path.size());
    const auto segment = std::string_view(u->path).substr(start, end - start);
    if (segment == "." || segment == "..") return false;
    start = end + 1;
  }
  return true;
}

int cache_seconds(std::string_view cache_control) {
  std::optional<long long> max_age;
  bool no_cache = false;
  for (const auto& item : split_list(to_lower(cache_control), EmptyItems::kDrop)) {
    if (item == "no-store" || item == "no-cache") no_cache = true;
    if (item.rfind("max-age=", 0) == 0) {
      const std::string digits = item.substr(8);
      if (!digits.empty() && digits.size() <= 12 && digits.find_first_not_of("0123456789") == std::string::npos)
        max_age = std::stoll(digits);
    }
  }
  if (no_cache) return limits::kOAuthCimdCacheMinSeconds;
  if (!max_age) return limits::kOAuthCimdCacheDefaultSeconds;
  return static_cast<int>(
      std::clamp<long long>(*max_age, limits::kOAuthCimdCacheMinSeconds, limits::kOAuthCimdCacheMaxSeconds));
}

}  // namespace scribe::oauth
