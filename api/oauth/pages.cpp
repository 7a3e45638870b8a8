#include "api/oauth/pages.h"

#include "api/oauth/wire.h"
#include "api/services.h"
#include "common/crypto.h"
#include "common/secrets.h"
#include "common/text.h"

namespace scribe::api::oauth {
namespace {

constexpr const char* kCss =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:26rem;margin:4rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.3rem;margin:0 0 1rem}
label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #b8bfcc;border-radius:4px;font-size:1rem}
button{margin-top:1.2rem;padding:.55rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #2a5bd7;background:#2a5bd7;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#2a5bd7;margin-left:.5rem}
.error{background:#fdecea;border:1px solid #f5c2c0;padding:.6rem;border-radius:4px}
.warning{background:#fff6e0;border:1px solid #f0d48a;padding:.6rem;border-radius:4px}
.muted{color:#5b6475;font-size:.9rem}
code{word-break:break-all}
)";

std::string secret(RequestContext& ctx) { return secrets::get(ctx.db(), "oauth_csrf"); }

}  // namespace

Response page(int status, std::string_view title, std::string_view body_html, std::string_view form_action) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      html_escape(title) +
      "</title>\n<link rel=\"stylesheet\" href=\"/oauth/static/oauth.css\">\n"
      // No icon to fetch: a browser otherwise asks for /favicon.ico, a 404.
      "<link rel=\"icon\" href=\"data:,\">\n</head>\n<body>\n<main>\n" +
      std::string(body_html) + "\n</main>\n</body>\n</html>\n";
  std::string form_sources = "'self'";
  if (!form_action.empty()) form_sources += " " + std::string(form_action);
  r.set_header("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action " +
                                              form_sources + "; frame-ancestors 'none'; base-uri 'none'");
  r.set_header("X-Frame-Options", "DENY");
  r.set_header("Cache-Control", "no-store");
  r.set_header("Referrer-Policy", "no-referrer");
  r.set_header("X-Content-Type-Options", "nosniff");
  return r;
}

Response error_page(int status, std::string_view message) {
  return page(status, "Cannot continue",
              "<h1>Cannot continue</h1>\n<p class=\"error\">" + html_escape(message) +
                  "</p>\n<p class=\"muted\">You can close this window and start again from the application.</p>");
}

Csrf csrf_for(RequestContext& ctx) {
  Csrf c;
  auto existing = cookie(ctx.req, kCsrfCookie);
  if (existing && existing->size() == 43) {
    c.cookie = *existing;
  } else {
    c.cookie = crypto::random_base64url(32);
    c.fresh = true;
  }
  c.field = crypto::hmac_sha256_hex(secret(ctx), c.cookie);
  return c;
}

bool csrf_valid(RequestContext& ctx, const std::optional<std::string>& field) {
  auto value = cookie(ctx.req, kCsrfCookie);
  if (!value || value->size() != 43 || !field) return false;
  return crypto::constant_time_equal(crypto::hmac_sha256_hex(secret(ctx), *value), *field);
}

bool secure_cookies(const RequestContext& ctx) { return ctx.services.config.public_url.rfind("https://", 0) == 0; }

void attach_csrf(RequestContext& ctx, const Csrf& csrf, Response& r) {
  // SameSite=Strict: a form posted from another site never carries it.
  if (csrf.fresh) r.set_header("Set-Cookie", set_cookie(kCsrfCookie, csrf.cookie, "Strict", secure_cookies(ctx), -1));
}

Response OAuthStyleHandler::handle(RequestContext&) {
  Response r;
  r.content_type = "text/css; charset=utf-8";
  r.body = kCss;
  r.set_header("Cache-Control", "public, max-age=3600");
  r.set_header("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace scribe::api::oauth
