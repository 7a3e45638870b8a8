#pragma once
#include <cstdint>

#include "api/router.h"
#include "common/json.h"

// The webhook of one API key, as the public API (/api/v1/webhooks, the
// caller's own key) and the console (/dashboard/api/v1/keys/{id}/webhook, any
// key of the signed-in account) both read and change it: one set of rules.
//
// Decisions (also in api/openapi.yaml):
//  - `url` must be https; private, loopback, link-local and internal hosts are
//    400 invalid_request naming `url` (the dispatcher checks again before
//    every POST, on the address it connects to).
//  - `events` may hold at most 20 names; unknown ones are dropped.
//  - The body is validated whole before the url's host is resolved, so an
//    error in `events` is reported even when the host does not resolve.
//  - The signing secret is `whsec_` and 64 hex characters; the HMAC key is
//    the whole secret string, prefix included.
// `key_id` must be a key of the caller's account; the caller checks that.
namespace scribe::api {

// The key's active webhook (id, url, events, health, created_at), or null.
Json key_webhook(RequestContext& ctx, int64_t key_id);
// Registers the key's webhook from the request's JSON body {url, events},
// replacing any other; returns the webhook with its one-time signing_secret.
Json register_key_webhook(RequestContext& ctx, int64_t key_id);
// Revokes the key's webhook; 404 not_found when none is registered.
void revoke_key_webhook(RequestContext& ctx, int64_t key_id);

}  // namespace scribe::api
