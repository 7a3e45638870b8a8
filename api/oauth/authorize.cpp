// GET /oauth/authorize, POST /oauth/sign-in, POST /oauth/consent: the
// authorization endpoint (OAuth 2.1 4.1.1-4.1.2, RFC 7636, RFC 8707, RFC
// 9207) and its two pages. The authorization request travels through the
// forms as its own query (a hidden field) and is checked again at every
// step, so a page can never approve something it did not show.
#include <variant>

#include "api/oauth/clients.h"
#include "api/oauth/credentials.h"
#include "api/oauth/handlers.h"
#include "api/oauth/pages.h"
#include "api/oauth/token_store.h"
#include "api/oauth/wire.h"
#include "api/services.h"
#include "commands/oauth_commands.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/text.h"
#include "domain/limits.h"
#include "domain/oauth.h"
#include "domain/oauth_exchange.h"
#include "domain/oauth_redirect.h"

namespace scribe::api::oauth {
namespace {

namespace rules = scribe::oauth;

const db::Statement kSession{
    "oauth_browser_sessions.select",
    "select s.account_id, a.email from oauth_browser_sessions s "
    "join accounts a on a.id = s.account_id where s.session_hash = $1 and s.expires_at > now()"};
const db::Statement kNewSession{"oauth_browser_sessions.insert",
                                "insert into oauth_browser_sessions(session_hash, account_id, expires_at) "
                                "values ($1, $2, now() + make_interval(secs => $3))"};
const db::Statement kConsented{"oauth_consents.exists",
                               "select 1 from oauth_consents where account_id = $1 and client_id = $2"};

struct AuthorizationRequest {
  Client client;
  std::string redirect_uri;
  std::string code_challenge;
  std::optional<std::string> state;
  std::vector<std::string> resources;
  std::string query;  // the request as received, re-encoded
};

// A checked request, or the response that refuses it.
using Checked = std::variant<AuthorizationRequest, Response>;

std::string issuer(const RequestContext& ctx) { return ctx.services.config.public_url; }

// RFC 6749 4.1.2.1 with RFC 9207's iss: the error goes back to the client.
Response error_redirect(const RequestContext& ctx, const std::string& redirect_uri,
                        const std::optional<std::string>& state, const std::string& error,
                        const std::string& description) {
  std::vector<std::pair<std::string, std::string>> q{{"error", error}, {"error_description", description}};
  if (state) q.emplace_back("state", *state);
  q.emplace_back("iss", issuer(ctx));
  return redirect(with_query(redirect_uri, q));
}

Checked check_request(RequestContext& ctx, const OAuthParams& params) {
  // Until the client and its redirect URI are known, nothing may redirect
  // (OAuth 2.1 4.1.2.1): an error page.
  std::optional<std::string> client_id, redirect_uri;
  try {
    client_id = params.one("client_id");
    redirect_uri = params.one("redirect_uri");
  } catch (const DuplicateParameter& d) {
    return error_page(400, d.name + " is given more than once.");
  }
  if (!client_id) return error_page(400, "The request names no client (client_id is missing).");
  auto lookup = client_for_authorization(ctx.services, ctx.db(), *client_id);
  if (!lookup.client) return error_page(400, lookup.error);
  if (!redirect_uri) return error_page(400, "The request has no redirect_uri.");
  if (!rules::redirect_matches(lookup.client->redirect_uris, *redirect_uri))
    return error_page(400, "The redirect_uri is not registered for this application.");

  AuthorizationRequest req{*lookup.client, *redirect_uri, "", std::nullopt, {}, params.encode()};
  try {
    req.state = params.one("state");
    const auto response_type = params.one("response_type");
    if (!response_type)
      return error_redirect(ctx, req.redirect_uri, req.state, "invalid_request", "response_type is required");
    if (response_type != "code")
      return error_redirect(ctx, req.redirect_uri, req.state, "unsupported_response_type",
                            "response_type must be code");
    const auto challenge = params.one("code_challenge");
    const auto method = params.one("code_challenge_method");
    // OAuth 2.1 4.1.1: PKCE is required; an absent method means plain, which
    // this server does not accept.
    if (!challenge)
      return error_redirect(ctx, req.redirect_uri, req.state, "invalid_request", "code_challenge is required (PKCE)");
    if (method != "S256")
      return error_redirect(ctx, req.redirect_uri, req.state, "invalid_request", "code_challenge_method must be S256");
    if (!rules::is_valid_code_challenge(*challenge))
      return error_redirect(ctx, req.redirect_uri, req.state, "invalid_request",
                            "code_challenge must be 43 base64url characters (S256)");
    req.code_challenge = *challenge;
    (void)params.one("scope");  // any; every token has the one scope (transcribe)
    const std::string& base = ctx.services.config.public_url;
    auto resources = rules::resolve_resources(base, params.all("resource"), rules::default_resources(base));
    if (!resources)
      return error_redirect(ctx, req.redirect_uri, req.state, "invalid_target",
                            "resource must be " + rules::resource_uri(base, rules::Audience::Rest) + " or " +
                                rules::resource_uri(base, rules::Audience::Mcp));
    req.resources = *resources;
  } catch (const DuplicateParameter& d) {
    return error_redirect(ctx, req.redirect_uri, std::nullopt, "invalid_request", d.name + " is given more than once");
  }
  return req;
}

struct Session {
  int64_t account_id = 0;
  std::string email;
};

std::optional<Session> signed_in(RequestContext& ctx) {
  auto value = cookie(ctx.req, kSessionCookie);
  if (!value || value->size() != 43) return std::nullopt;
  pqxx::nontransaction txn(ctx.db());
  auto rows = txn.exec_prepared(kSession.name, rules::hash_secret(*value));
  if (rows.empty()) return std::nullopt;
  return Session{rows[0][0].as<int64_t>(), rows[0][1].as<std::string>()};
}

// Back to the client with a code (OAuth 2.1 4.1.2, RFC 9207).
Response approve(RequestContext& ctx, const AuthorizationRequest& req, int64_t account_id) {
  CodeGrant grant{commands::next_grant_id(ctx.db()),
                  account_id,
                  req.client.client_id,
                  req.redirect_uri,
                  req.code_challenge,
                  req.resources};
  const std::string code = store_code(ctx.db(), grant, ctx.services.config.oauth_code_ttl_seconds);
  std::vector<std::pair<std::string, std::string>> q{{"code", code}};
  if (req.state) q.emplace_back("state", *req.state);
  q.emplace_back("iss", issuer(ctx));
  return redirect(with_query(req.redirect_uri, q));
}

std::string hidden(std::string_view name, std::string_view value) {
  return "<input type=\"hidden\" name=\"" + std::string(name) + "\" value=\"" + html_escape(value) + "\">";
}

Response sign_in_page(RequestContext& ctx, const AuthorizationRequest& req, int status, std::string_view message,
                      std::string_view email = "") {
  const Csrf csrf = csrf_for(ctx);
  std::string body = "<h1>Sign in to scribe</h1>\n<p><strong>" + html_escape(req.client.display_name()) +
                     "</strong> asks to use your scribe account. Sign in to continue.</p>\n";
  if (!message.empty()) body += "<p class=\"error\" role=\"alert\">" + html_escape(message) + "</p>\n";
  body += "<form method=\"post\" action=\"/oauth/sign-in\">\n" + hidden("csrf", csrf.field) + "\n" +
          hidden("return_to", req.query) +
          "\n<label for=\"email\">Email</label>\n<input id=\"email\" name=\"email\" type=\"email\" "
          "autocomplete=\"username\" required value=\"" +
          html_escape(email) +
          "\">\n<label for=\"password\">Password</label>\n<input id=\"password\" name=\"password\" type=\"password\" "
          "autocomplete=\"current-password\" required>\n<button type=\"submit\">Sign in</button>\n</form>";
  Response r = page(status, "Sign in - scribe", body, rules::redirect_csp_source(req.redirect_uri));
  attach_csrf(ctx, csrf, r);
  return r;
}

Response consent_page(RequestContext& ctx, const AuthorizationRequest& req, const Session& session) {
  const Csrf csrf = csrf_for(ctx);
  const std::string name = html_escape(req.client.display_name());
  std::string body = "<h1>Allow " + name + " to use your account?</h1>\n";
  body += "<p>Signed in as <strong>" + html_escape(session.email) + "</strong>.</p>\n";
  body += "<p><strong>" + name +
          "</strong> will have <strong>full access to your transcriptions</strong> and <strong>can "
          "spend your wallet money</strong> (start paid transcriptions) until you disconnect it.</p>\n";
  body += "<p class=\"muted\">After you approve, you are sent to <strong>" +
          html_escape(rules::redirect_display_host(req.redirect_uri)) + "</strong>.";
  if (req.client.kind == "cimd")
    body += " The application is described by <code>" + html_escape(req.client.client_id) + "</code>.";
  body += "</p>\n";
  if (rules::all_loopback(req.client.redirect_uris))
    body +=
        "<p class=\"warning\" role=\"alert\">This application receives its authorization on this computer "
        "(localhost). Any program on this computer can claim to be it: approve only if you started this "
        "sign-in yourself just now.</p>\n";
  body += "<form method=\"post\" action=\"/oauth/consent\">\n" + hidden("csrf", csrf.field) + "\n" +
          hidden("request", req.query) +
          "\n<button type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>"
          "<button type=\"submit\" name=\"decision\" value=\"deny\" class=\"secondary\">Deny</button>\n</form>";
  Response r = page(200, "Allow " + req.client.display_name() + "? - scribe", body,
                    rules::redirect_csp_source(req.redirect_uri));
  attach_csrf(ctx, csrf, r);
  return r;
}

// Signed in: straight back with a code when the person need not be asked
// (the console; a remembered consent of a client that is not loopback-only),
// else the consent page.
Response continue_signed_in(RequestContext& ctx, const AuthorizationRequest& req, const Session& session) {
  if (req.client.first_party()) return approve(ctx, req, session.account_id);
  if (!rules::all_loopback(req.client.redirect_uris)) {
    pqxx::nontransaction txn(ctx.db());
    const bool remembered = !txn.exec_prepared(kConsented.name, session.account_id, req.client.client_id).empty();
    txn.commit();
    if (remembered) return approve(ctx, req, session.account_id);
  }
  return consent_page(ctx, req, session);
}

// The form of a POST page, its CSRF field checked, and the authorization
// request it carries in `field`.
Checked posted_request(RequestContext& ctx, std::optional<OAuthParams>& form, std::string_view field) {
  form = OAuthParams::form(ctx.req);
  if (!form) return error_page(400, "The form could not be read.");
  std::optional<std::string> csrf, carried;
  try {
    csrf = form->one("csrf");
    carried = form->one(field);
  } catch (const DuplicateParameter& d) {
    return error_page(400, d.name + " is given more than once.");
  }
  // The CSRF check comes first: a cross-site form learns nothing, not even
  // whether its request would have been valid.
  if (!csrf_valid(ctx, csrf))
    return error_page(403, "This form has expired or did not come from this site. Start again from the application.");
  std::vector<std::pair<std::string, std::string>> items;
  if (!carried || !parse_urlencoded(*carried, items)) return error_page(400, "The form carries no request.");
  return check_request(ctx, OAuthParams(std::move(items)));
}

}  // namespace

Response AuthorizeHandler::handle(RequestContext& ctx) {
  Checked checked = check_request(ctx, OAuthParams(ctx.req.query));
  if (auto* refusal = std::get_if<Response>(&checked)) return std::move(*refusal);
  const auto& req = std::get<AuthorizationRequest>(checked);
  if (auto session = signed_in(ctx)) return continue_signed_in(ctx, req, *session);
  return sign_in_page(ctx, req, 200, "");
}

Response SignInHandler::handle(RequestContext& ctx) {
  std::optional<OAuthParams> form;
  Checked checked = posted_request(ctx, form, "return_to");
  if (auto* refusal = std::get_if<Response>(&checked)) return std::move(*refusal);
  const auto& req = std::get<AuthorizationRequest>(checked);
  std::optional<std::string> email, password;
  try {
    email = form->one("email");
    password = form->one("password");
  } catch (const DuplicateParameter& d) {
    return sign_in_page(ctx, req, 400, d.name + " is given more than once.");
  }
  if (!email || !password)
    return sign_in_page(ctx, req, 400, "Enter your email and your password.", email.value_or(""));
  const std::string address = ctx.req.remote;
  // Counted per address and per email whether or not the email exists, and
  // checked before the password: the answer says nothing about the account.
  if (sign_in_blocked(ctx.db(), address, *email)) {
    Response r = sign_in_page(ctx, req, 429, "Too many failed sign-ins. Try again in 15 minutes.", *email);
    r.set_header("Retry-After", std::to_string(limits::kOAuthSignInWindowSeconds));
    return r;
  }
  auto account = check_password(ctx.db(), *email, *password, ctx.services.config.password_hash_cost_log2);
  if (!account) {
    record_sign_in_failure(ctx.db(), address, *email);
    return sign_in_page(ctx, req, 401, "The email or the password is not right.", *email);
  }
  const std::string session = crypto::random_base64url(32);
  {
    pqxx::nontransaction txn(ctx.db());
    txn.exec_prepared(kNewSession.name, rules::hash_secret(session), *account, limits::kOAuthBrowserSessionSeconds);
  }
  // Back to the authorization request, now signed in (303: a GET).
  Response r = redirect("/oauth/authorize?" + req.query, 303);
  r.set_header("Set-Cookie",
               set_cookie(kSessionCookie, session, "Lax", secure_cookies(ctx), limits::kOAuthBrowserSessionSeconds));
  return r;
}

Response ConsentHandler::handle(RequestContext& ctx) {
  std::optional<OAuthParams> form;
  Checked checked = posted_request(ctx, form, "request");
  if (auto* refusal = std::get_if<Response>(&checked)) return std::move(*refusal);
  const auto& req = std::get<AuthorizationRequest>(checked);
  auto session = signed_in(ctx);
  if (!session) return sign_in_page(ctx, req, 401, "Your sign-in has ended. Sign in again.");
  std::optional<std::string> decision;
  try {
    decision = form->one("decision");
  } catch (const DuplicateParameter&) {
    decision.reset();
  }
  if (decision == "deny")
    return error_redirect(ctx, req.redirect_uri, req.state, "access_denied", "the person denied the request");
  if (decision != "approve") return error_page(400, "Choose Approve or Deny.");
  // Remembered, so the next authorization goes straight back, except for
  // loopback-only clients: anyone can claim to be one, so they ask each time.
  if (!req.client.first_party() && !rules::all_loopback(req.client.redirect_uris))
    commands::give_consent(ctx.services.store, ctx.db(), session->account_id, req.client.client_id,
                           {"user:" + std::to_string(session->account_id), ctx.request_id});
  return approve(ctx, req, session->account_id);
}

}  // namespace scribe::api::oauth
