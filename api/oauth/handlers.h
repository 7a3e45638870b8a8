#pragma once
#include "api/router.h"
#include "eventstore/event_store.h"

// The authorization server's endpoints (docs/oauth_wire_rules.md; the
// routes are in api/routes.cpp, none of them Bearer-authenticated).
namespace scribe::api::oauth {

// GET /.well-known/oauth-authorization-server (RFC 8414).
struct AuthorizationServerMetadataHandler {
  static Response handle(RequestContext& ctx);
};

// POST /oauth/register (RFC 7591): public clients only, rate-limited per
// client address.
struct RegisterHandler {
  static Response handle(RequestContext& ctx);
};

// GET /oauth/authorize: the authorization request; the sign-in page, the
// consent page, or straight back to the client with a code.
struct AuthorizeHandler {
  static Response handle(RequestContext& ctx);
};
// POST /oauth/sign-in: email and password from the sign-in page.
struct SignInHandler {
  static Response handle(RequestContext& ctx);
};
// POST /oauth/consent: Approve or Deny from the consent page.
struct ConsentHandler {
  static Response handle(RequestContext& ctx);
};

// POST /oauth/token (authorization_code with PKCE, refresh_token).
struct TokenHandler {
  static Response handle(RequestContext& ctx);
};
// POST /oauth/revoke (RFC 7009).
struct RevokeHandler {
  static Response handle(RequestContext& ctx);
};

// Expired codes, tokens, sessions and sign-in failures removed, clients
// unused for limits::kOAuthClientUnusedDays expired (ClientExpired); returns
// how many rows or clients went. Run by the server's housekeeping.
int housekeeping(const eventstore::EventStore& store, pqxx::connection& conn);

}  // namespace scribe::api::oauth
