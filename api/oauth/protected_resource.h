#pragma once
#include <string>
#include <string_view>

#include "api/principal.h"
#include "api/router.h"
#include "common/json.h"
#include "domain/oauth.h"

// The resource server's half of OAuth discovery and audience (RFC 9728,
// RFC 8707, RFC 6750): which resource a request path belongs to, the
// protected-resource metadata documents, and the challenge of a 401.
//
// Two resources, `base` being the public URL (an origin, no path):
//   {base}      the REST API: /api/v1/*, /v1/* (and the console's /dashboard/api/v1/*)
//   {base}/mcp  the MCP endpoint /mcp
// A token is accepted where one of its resources is the request's; a token
// issued for both is accepted by both.
namespace scribe::api::oauth {

// The audience of a request path: /mcp (and below) is MCP, the rest REST.
scribe::oauth::Audience audience_of(std::string_view path);
// Where the protected-resource metadata of `audience` is served (RFC 9728 3.1:
// the well-known path, with the resource's path appended for /mcp).
std::string metadata_url(std::string_view base, scribe::oauth::Audience audience);
// The document itself (RFC 9728 2).
Json metadata(std::string_view base, scribe::oauth::Audience audience);
// The WWW-Authenticate value of a 401 on `path`: `Bearer
// resource_metadata="<metadata_url>"`, with `error="invalid_token"` when the
// request presented a Bearer token that failed (RFC 6750 3.1: a request
// without credentials gets no error code).
std::string bearer_challenge(std::string_view base, std::string_view path, bool token_presented);
// Whether `authorization` (the header's value) presents a Bearer token.
bool presents_bearer_token(std::string_view authorization);
// Throws 401 unauthenticated when `p` is an OAuth principal whose resources
// do not include the audience of `path` (a token for /mcp on the REST API, or
// one for the REST API on /mcp). API keys are for every route.
void check_audience(const Principal& p, std::string_view base, std::string_view path);

// GET /.well-known/oauth-protected-resource (the REST API, {base}) and
// GET /.well-known/oauth-protected-resource/mcp ({base}/mcp).
struct ProtectedResourceHandler {
  static Response rest(RequestContext& ctx);
  static Response mcp(RequestContext& ctx);
};

}  // namespace scribe::api::oauth
