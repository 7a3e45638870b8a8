#include "api/oauth/protected_resource.h"

#include <strings.h>

#include <algorithm>

#include "api/services.h"
#include "common/error.h"

namespace scribe::api::oauth {

using scribe::oauth::Audience;

Audience audience_of(std::string_view path) {
  return path == "/mcp" || path.starts_with("/mcp/") ? Audience::Mcp : Audience::Rest;
}

std::string metadata_url(std::string_view base, Audience audience) {
  return std::string(base) + "/.well-known/oauth-protected-resource" + (audience == Audience::Mcp ? "/mcp" : "");
}

Json metadata(std::string_view base, Audience audience) {
  const bool mcp = audience == Audience::Mcp;
  return {{"resource", scribe::oauth::resource_uri(base, audience)},
          // The issuer: the same string as the authorization server's
          // metadata `issuer` and the `iss` of its responses.
          {"authorization_servers", Json::array({std::string(base)})},
          {"bearer_methods_supported", Json::array({"header"})},
          {"scopes_supported", Json::array({std::string(scribe::oauth::kScope)})},
          {"resource_name", mcp ? "scribe MCP server" : "scribe transcription API"},
          {"resource_documentation", std::string(base) + "/api/v1/openapi.yaml"}};
}

bool presents_bearer_token(std::string_view h) {
  if (h.size() < 7 || strncasecmp(h.data(), "Bearer ", 7) != 0) return false;
  return std::any_of(h.begin() + 7, h.end(), [](char c) { return c != ' '; });
}

std::string bearer_challenge(std::string_view base, std::string_view path, bool token_presented) {
  std::string v = "Bearer resource_metadata=\"" + metadata_url(base, audience_of(path)) + "\"";
  if (token_presented) v += ", error=\"invalid_token\"";
  return v;
}

void check_audience(const Principal& p, std::string_view base, std::string_view path) {
  if (p.kind != Principal::Kind::OAuth) return;
  const Audience audience = audience_of(path);
  if (scribe::oauth::accepts(p.resources, base, audience)) return;
  const std::string wanted = scribe::oauth::resource_uri(base, audience);
  std::string held;
  for (const auto& r : p.resources) held += (held.empty() ? "" : ", ") + r;
  throw Error("unauthenticated", "wrong audience: the access token was issued for " +
                                     (held.empty() ? std::string("no resource") : held) + ", not for " + wanted +
                                     "; authorize with resource=" + wanted);
}

namespace {

Response discovery(Json body) {
  Response r = Response::json(200, std::move(body));
  r.set_header("Cache-Control", "public, max-age=3600");
  return r;
}

}  // namespace

Response ProtectedResourceHandler::rest(RequestContext& ctx) {
  return discovery(metadata(ctx.services.config.public_url, Audience::Rest));
}

Response ProtectedResourceHandler::mcp(RequestContext& ctx) {
  return discovery(metadata(ctx.services.config.public_url, Audience::Mcp));
}

}  // namespace scribe::api::oauth
