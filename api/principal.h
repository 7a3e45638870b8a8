#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "common/time.h"
#include "domain/api_key.h"
#include "domain/money.h"

namespace scribe::api {

// Who is calling. API keys today; OAuth 2.1 access tokens will produce the
// same struct with kind = OAuth (always full access, rate-limited per user).
struct Principal {
  enum class Kind { ApiKey, OAuth } kind = Kind::ApiKey;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;  // API keys only
  std::string oauth_client_id;    // OAuth only
  apikey::Permission permission = apikey::Permission::Full;
  std::optional<money::Micros> monthly_cap;
  std::optional<TimePoint> expires_at;
  std::string key_prefix;
  // False for an API key taken from the authenticator's cache: who the key
  // belongs to is known, but not yet whether it is still valid (revocation,
  // expiry). A route whose handler checks that in its own statement
  // (Route::handler_checks_key) runs with such a principal; every other route
  // gets a verified one. key_digest is what that check compares.
  bool verified = true;
  std::string key_digest;

  // The bucket the shared rate limiter counts against.
  std::string rate_bucket() const {
    return kind == Kind::ApiKey ? "key:" + std::to_string(*key_id) : "user:" + std::to_string(account_id);
  }
  // The identity of idempotency cache entries (spec: the API key, or user plus
  // OAuth client).
  std::string idempotency_principal() const {
    return kind == Kind::ApiKey ? "key:" + std::to_string(*key_id)
                                : "user:" + std::to_string(account_id) + "/client:" + oauth_client_id;
  }
};

}  // namespace scribe::api
