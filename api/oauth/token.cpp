// POST /oauth/token, POST /oauth/revoke, POST /oauth/register and the
// authorization server's metadata: the endpoints clients call directly
// (JSON answers, RFC 6749 5.2 / RFC 7591 3.2.2 errors, never cached).
#include <variant>

#include "api/oauth/clients.h"
#include "api/oauth/credentials.h"
#include "api/oauth/handlers.h"
#include "api/oauth/token_store.h"
#include "api/oauth/wire.h"
#include "api/params.h"
#include "api/rate_limiter.h"
#include "api/services.h"
#include "commands/oauth_commands.h"
#include "common/error.h"
#include "domain/limits.h"
#include "domain/oauth.h"
#include "domain/oauth_client.h"

namespace scribe::api::oauth {
namespace {

namespace rules = scribe::oauth;

Response tokens_response(const IssuedTokens& t) {
  Response r = Response::json(200, {{"access_token", t.access_token},
                                    {"token_type", "Bearer"},
                                    {"expires_in", t.expires_in},
                                    {"refresh_token", t.refresh_token},
                                    {"scope", std::string(rules::kScope)}});
  no_store(r);
  return r;
}

Response invalid_client(std::string_view why) {
  Response r = oauth_error(401, "invalid_client", why);
  // RFC 6749 5.2: a 401 names the scheme the client could authenticate
  // with; public clients authenticate with nothing but their client_id.
  r.set_header("WWW-Authenticate", "OAuth realm=\"scribe\"");
  return r;
}

std::string resource_choices(const std::string& base) {
  return rules::resource_uri(base, rules::Audience::Rest) + " or " + rules::resource_uri(base, rules::Audience::Mcp);
}

Response token_request(RequestContext& ctx, const OAuthParams& form) {
  if (ctx.req.header("authorization"))
    return invalid_client("only public clients are registered here: send client_id in the body, no Authorization");
  const auto grant_type = form.one("grant_type");
  if (!grant_type) return oauth_error(400, "invalid_request", "grant_type is required");
  if (*grant_type != "authorization_code" && *grant_type != "refresh_token")
    return oauth_error(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
  const auto client_id = form.one("client_id");
  if (!client_id) return invalid_client("client_id is required");
  auto& conn = ctx.db();
  if (!client_for_token(ctx.services, conn, *client_id))
    return invalid_client("the client is unknown or was deleted for being unused; register again");
  const std::string base = ctx.services.config.public_url;
  const auto requested = form.all("resource");
  const NarrowResources narrow = [&](const std::vector<std::string>& held) {
    return rules::resolve_resources(base, requested, held, &held);
  };
  const commands::Meta meta{"oauth-client:" + *client_id, ctx.request_id};
  const int ttl = ctx.services.config.oauth_access_ttl_seconds;
  std::optional<IssuedTokens> tokens;
  if (*grant_type == "authorization_code") {
    const auto code = form.one("code");
    if (!code) return oauth_error(400, "invalid_request", "code is required");
    rules::CodeRequest req{*client_id, form.one("redirect_uri").value_or(""), form.one("code_verifier").value_or("")};
    auto out = exchange_code(ctx.services.store, conn, *code, req, narrow, ttl, meta);
    if (out.error == ExchangeError::InvalidTarget)
      return oauth_error(400, "invalid_target",
                         "resource must be among the authorization's resources (" + resource_choices(base) + ")");
    if (out.error != ExchangeError::None) return oauth_error(400, "invalid_grant", rules::describe(out.decision));
    tokens = out.tokens;
  } else {
    const auto refresh = form.one("refresh_token");
    if (!refresh) return oauth_error(400, "invalid_request", "refresh_token is required");
    auto out = exchange_refresh(ctx.services.store, conn, *refresh, *client_id, narrow, ttl, meta);
    if (out.error == ExchangeError::InvalidTarget)
      return oauth_error(400, "invalid_target", "resource must be among the grant's resources; a refresh never widens");
    if (out.error != ExchangeError::None) return oauth_error(400, "invalid_grant", rules::describe(out.decision));
    tokens = out.tokens;
  }
  commands::record_client_use(ctx.services.store, conn, *client_id, meta);
  return tokens_response(*tokens);
}

}  // namespace

Response TokenHandler::handle(RequestContext& ctx) {
  auto form = OAuthParams::form(ctx.req);
  if (!form)
    return oauth_error(400, "invalid_request", "the body must be application/x-www-form-urlencoded parameters");
  try {
    return token_request(ctx, *form);
  } catch (const DuplicateParameter& d) {
    return oauth_error(400, "invalid_request", d.name + " is given more than once");
  }
}

Response RevokeHandler::handle(RequestContext& ctx) {
  auto form = OAuthParams::form(ctx.req);
  if (!form)
    return oauth_error(400, "invalid_request", "the body must be application/x-www-form-urlencoded parameters");
  try {
    const auto token = form->one("token");
    (void)form->one("token_type_hint");  // both kinds are looked up anyway (RFC 7009 2.1)
    if (!token) return oauth_error(400, "invalid_request", "token is required");
    const auto client_id = form->one("client_id");
    if (!client_id) return invalid_client("client_id is required");
    if (!client_for_token(ctx.services, ctx.db(), *client_id))
      return invalid_client("the client is unknown or was deleted for being unused");
    revoke_token(ctx.services.store, ctx.db(), *token, *client_id, {"oauth-client:" + *client_id, ctx.request_id});
  } catch (const DuplicateParameter& d) {
    return oauth_error(400, "invalid_request", d.name + " is given more than once");
  }
  // RFC 7009 2.2: 200 whether or not the token was known.
  Response r;
  r.status = 200;
  r.content_type = "application/json; charset=utf-8";
  r.body = "{}";
  no_store(r);
  return r;
}

Response RegisterHandler::handle(RequestContext& ctx) {
  static const RateLimiter limiter(limits::kOAuthRegistrationsPerMinute);
  if (const int64_t wait = limiter.take(ctx.db(), "oauth-register:" + ctx.req.remote); wait > 0) {
    Response r = oauth_error(429, "too_many_requests", "too many registrations from this address; retry later");
    r.set_header("Retry-After", std::to_string(wait));
    return r;
  }
  if (ctx.req.body.size() > limits::kOAuthRegistrationMaxBytes)
    return oauth_error(413, "invalid_client_metadata", "the registration is too large");
  Json body;
  try {
    body = parse_json_strictly(ctx.req.body);
  } catch (const Error&) {
    return oauth_error(400, "invalid_client_metadata", "the body must be a JSON object of client metadata");
  }
  auto checked = rules::check_registration(body);
  if (auto* err = std::get_if<rules::MetadataError>(&checked)) return oauth_error(400, err->error, err->description);
  const auto& meta = std::get<rules::ClientMetadata>(checked);
  rules::ClientRecord record{rules::generate_dcr_client_id(), rules::ClientKind::Dcr, meta.client_name,
                             meta.redirect_uris, meta.application_type};
  commands::register_client(ctx.services.store, ctx.db(), record, {"oauth-register", ctx.request_id});
  Json out = meta.to_json();
  out["client_id"] = record.client_id;
  out["client_id_issued_at"] = to_unix_micros(now()) / 1'000'000;
  Response r = Response::json(201, out);
  no_store(r);
  return r;
}

Response AuthorizationServerMetadataHandler::handle(RequestContext& ctx) {
  const std::string& base = ctx.services.config.public_url;
  Json doc = {{"issuer", base},
              {"authorization_endpoint", base + "/oauth/authorize"},
              {"token_endpoint", base + "/oauth/token"},
              {"registration_endpoint", base + "/oauth/register"},
              {"revocation_endpoint", base + "/oauth/revoke"},
              {"response_types_supported", {"code"}},
              {"response_modes_supported", {"query"}},
              {"grant_types_supported", {"authorization_code", "refresh_token"}},
              {"code_challenge_methods_supported", {"S256"}},
              {"token_endpoint_auth_methods_supported", {"none"}},
              {"revocation_endpoint_auth_methods_supported", {"none"}},
              {"scopes_supported", {std::string(rules::kScope)}},
              {"client_id_metadata_document_supported", true},
              {"authorization_response_iss_parameter_supported", true},
              {"service_documentation", base + "/api/v1/openapi.yaml"}};
  Response r = Response::json(200, doc);
  r.set_header("Cache-Control", "public, max-age=3600");
  return r;
}

int housekeeping(const eventstore::EventStore& store, pqxx::connection& conn) {
  int n = sweep_expired(conn) + sweep_sign_in_failures(conn);
  n += commands::expire_unused_clients(store, conn, now() - std::chrono::hours(24) * limits::kOAuthClientUnusedDays,
                                       1000, {"housekeeping", ""});
  return n;
}

}  // namespace scribe::api::oauth
