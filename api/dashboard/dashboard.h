#pragma once
#include "api/router.h"

// The first-party dashboard endpoints under /dashboard/api/v1/: account
// management for the service's own web console (the pages the spec's /me
// `links` point at), not the public API. Only access tokens of the built-in
// console client (oauth::kConsoleClientId, first_party) may call them; API
// keys and other apps' tokens get 403 forbidden (Route::console_only), so an
// app a person connected cannot mint keys, reach webhooks or disconnect other
// apps. Bearer only, no cookies, no CORS (the console is served from the same
// origin). Each reuses the commands and rules of the public API and
// `scribe admin` (account and webhook commands, api/key_webhook.h, the
// authorization server's grant and consent commands).
namespace scribe::api::dashboard {

struct KeysHandler {
  static Response list(RequestContext& ctx);    // GET keys
  static Response create(RequestContext& ctx);  // POST keys
  static Response revoke(RequestContext& ctx);  // DELETE keys/{id}
};
struct KeyWebhookHandler {
  static Response get(RequestContext& ctx);         // GET keys/{id}/webhook
  static Response put(RequestContext& ctx);         // PUT keys/{id}/webhook
  static Response remove(RequestContext& ctx);      // DELETE keys/{id}/webhook
  static Response test(RequestContext& ctx);        // POST keys/{id}/webhook/test
  static Response deliveries(RequestContext& ctx);  // GET keys/{id}/webhook/deliveries
};
struct ConnectedAppsHandler {
  static Response list(RequestContext& ctx);        // GET connected-apps
  static Response disconnect(RequestContext& ctx);  // DELETE connected-apps?client_id=
};
struct UsageHandler {
  static Response get(RequestContext& ctx);  // GET usage
};

}  // namespace scribe::api::dashboard
