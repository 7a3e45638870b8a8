#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "domain/api_key.h"
#include "domain/money.h"

namespace scribe::api {

// Who is calling: an API key, or an OAuth 2.1 access token (kind = OAuth:
// always full access, rate-limited per user, api/oauth/token_verifier.h).
struct Principal {
  enum class Kind { ApiKey, OAuth } kind = Kind::ApiKey;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;  // API keys only
  std::string oauth_client_id;    // OAuth only
  // OAuth only: the token is the service's own console's (the first-party
  // client, the only one the /dashboard/api/v1 endpoints accept).
  bool first_party = false;
  // OAuth only: the resources (RFC 8707) the token is bound to; a route is
  // served only when they cover its own (ApiApp::authorize).
  std::vector<std::string> resources;
  apikey::Permission permission = apikey::Permission::Full;
  std::optional<money::Micros> monthly_cap;
  std::optional<TimePoint> expires_at;
  std::string key_prefix;
  // False for a credential (API key or OAuth access token) taken from the
  // authenticator's cache: whose it is is known, but not yet whether it is
  // still valid (revocation, expiry). A route whose handler checks that in its
  // own statement (Route::handler_checks_key) runs with such a principal;
  // every other route gets a verified one. `digest` (the credential's SHA-256)
  // is what that check compares.
  bool verified = true;
  std::string digest;

  // The bucket the shared rate limiter counts against: the key, or for OAuth
  // the user, so all of a person's apps share one allowance (spec, Limits);
  // the web console's sign-in has a bucket (and a budget) of its own per
  // account (domain/limits.h kConsoleRequestsPerMinute).
  std::string rate_bucket() const {
    if (kind == Kind::ApiKey) return "key:" + std::to_string(*key_id);
    return (first_party ? "console:" : "user:") + std::to_string(account_id);
  }
  // The identity of idempotency cache entries (spec: the API key, or user plus
  // OAuth client).
  std::string idempotency_principal() const {
    return kind == Kind::ApiKey ? "key:" + std::to_string(*key_id)
                                : "user:" + std::to_string(account_id) + "/client:" + oauth_client_id;
  }
};

}  // namespace scribe::api
