#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "api/router.h"

// The HTML pages of the authorization server (sign-in, consent, errors):
// rendered on the server, no script, one stylesheet from
// /oauth/static/oauth.css, never framed, never cached, never sending a
// Referer (the request's query names the client and its redirect), and
// CSRF-protected forms.
namespace scribe::api::oauth {

inline constexpr std::string_view kSessionCookie = "scribe_oauth_session";
inline constexpr std::string_view kCsrfCookie = "scribe_oauth_csrf";

// A page with the headers every page carries:
//   Content-Security-Policy: default-src 'none'; style-src 'self'; img-src 'self' data:;
//     form-action 'self' <form_action>; frame-ancestors 'none'; base-uri 'none'
//   X-Frame-Options: DENY, Cache-Control: no-store, Referrer-Policy: no-referrer,
//   X-Content-Type-Options: nosniff.
// `form_action` is the client's redirect origin on pages whose form ends in a
// redirect to it (browsers check form-action along the redirects after a
// submission); empty otherwise.
Response page(int status, std::string_view title, std::string_view body_html, std::string_view form_action = "");
// An error page (an unknown client, an unregistered redirect, a refused form).
Response error_page(int status, std::string_view message);

// CSRF (double submit, signed): the cookie holds a random value; each form
// carries HMAC(server secret, that value). A page with a form takes the
// request's cookie or makes a new one (then Set-Cookie on the page).
struct Csrf {
  std::string cookie;
  std::string field;  // the hidden field's value
  bool fresh = false;
};
Csrf csrf_for(RequestContext& ctx);
// Whether the form's `csrf` field matches the request's cookie.
bool csrf_valid(RequestContext& ctx, const std::optional<std::string>& field);
// Sets the CSRF cookie on `r` when `csrf` was made for this response.
void attach_csrf(RequestContext& ctx, const Csrf& csrf, Response& r);
// Whether cookies get the Secure attribute (the public URL is https).
bool secure_cookies(const RequestContext& ctx);

// GET /oauth/static/oauth.css
struct OAuthStyleHandler {
  static Response handle(RequestContext& ctx);
};

}  // namespace scribe::api::oauth
