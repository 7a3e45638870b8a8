#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "api/authenticator.h"
#include "api/principal.h"

// The resource server's side of OAuth 2.1: turns an access token into a
// Principal by reading its row, on every request.
namespace scribe::api::oauth {

// Verifies `sat_` access tokens against the authorization server's rows
// (migrations/060_oauth.sql): one indexed statement reads the token by its
// SHA-256 (oauth_tokens' primary key) joined with its grant (oauth_grants'
// primary key). Nothing about a token's validity is kept in memory, so an
// access token or grant revoked by any process is refused on the next request
// of every process; what a token may do follows from its row alone:
//   - not of the access tokens' form (a refresh token among them): 401
//     unauthenticated without a lookup;
//   - unknown (no row): nullopt;
//   - revoked (the token's revoked_at, or its grant's): 401 unauthenticated;
//   - expired (expires_at <= now()): 401 unauthenticated;
//   - else a Principal of kind OAuth with the account, client, resources,
//     expiry, digest, and first_party for the console client.
// Whether the resources cover the route is the caller's check
// (ApiApp::authorize), as it depends on the route.
class TokenVerifier final : public OAuthVerifier {
 public:
  std::optional<Principal> verify(pqxx::transaction_base& txn, const std::string& token) override;

  // Refuses a cached OAuth principal's token as verify() would, from its row
  // read in the caller's statement: whether an access-token row with the
  // principal's digest exists (with its grant), is revoked, and has expired.
  static void check(const Principal& p, bool found, const std::string& stored_digest, bool revoked, bool expired);
  // Token rows read (for tests that check a refusal cost no lookup).
  uint64_t lookups() const { return lookups_.load(); }

 private:
  std::atomic<uint64_t> lookups_{0};
};

}  // namespace scribe::api::oauth
