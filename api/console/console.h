#pragma once
#include <array>

#include "api/http.h"
#include "api/router.h"

// The web console (issue 36) as `scribe serve` hosts it: the pages of its
// router, its hashed assets and its configuration, read from the folder its
// build wrote (SCRIBE_CONSOLE_DIR, by default the source tree's console/dist).
// Public, not rate-limited; the console then signs in through /oauth and
// calls the API with its Bearer token, never cookies.
//
// Decisions (also in api/openapi.yaml, tag Console):
//  - Every page of kPages serves the build's index.html with Cache-Control
//    no-cache (a new build is picked up at the next load); the console's own
//    router shows the page. Any other /app path is 404 not_found: the router
//    has no wildcard, so a mistyped address does not load the console.
//  - Without index.html in the folder, the pages answer 503 with an HTML page
//    saying how to build it; /app/config.json still answers.
//  - /app/assets/{name}: a file of the build's assets/ folder, cached for a
//    year and immutable (the build names each by its content's hash), typed
//    by extension (console_files.h; any other name is 404), precompressed
//    `{name}.gz` served when the client accepts gzip.
//  - Every /app response, errors included, carries the console's security
//    headers (add_security_headers; ApiApp::finish adds them).
namespace scribe::api::console {

// The console's pages, one route each (api/routes.cpp).
inline constexpr std::array<const char*, 12> kPages{
    "/app",         "/app/callback",     "/app/search",          "/app/record",
    "/app/account", "/app/account/keys", "/app/account/apps",    "/app/account/usage",
    "/app/docs",    "/app/support",      "/app/account/billing", "/app/transcriptions/{id}"};

struct ConsolePageHandler {
  static Response handle(RequestContext& ctx);
};
struct ConsoleAssetHandler {
  static Response handle(RequestContext& ctx);  // GET /app/assets/{name}
};
struct ConsoleConfigHandler {
  static Response handle(RequestContext& ctx);  // GET /app/config.json
};

// Content-Security-Policy, X-Frame-Options DENY, X-Content-Type-Options
// nosniff and Referrer-Policy no-referrer.
void add_security_headers(Response& res);

}  // namespace scribe::api::console
