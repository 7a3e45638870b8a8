#pragma once
#include <chrono>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <unordered_map>

#include "api/http.h"
#include "api/principal.h"

namespace scribe::api {

// Turns the Authorization header into a Principal or throws the spec's 401.
// Tokens that start with `key_` are API keys; anything else is taken for an
// OAuth access token and handed to the OAuth verifier, the seam where OAuth 2.1
// plugs in. With no verifier configured every such token fails verification
// (401 unauthenticated), as the spec says for a token that cannot be verified.
class OAuthVerifier {
 public:
  virtual ~OAuthVerifier() = default;
  virtual std::optional<Principal> verify(pqxx::transaction_base& txn, const std::string& token) = 0;
};

class Authenticator {
 public:
  explicit Authenticator(OAuthVerifier* oauth = nullptr) : oauth_(oauth) {}
  Authenticator(const Authenticator& other) : oauth_(other.oauth_) {}
  Principal authenticate(pqxx::transaction_base& txn, const Request& req) const;

  // The caller's API key from a cache of keys this process has authenticated
  // before, without a database read; verified is false (see Principal). Only
  // what never changes for a key is cached (its id, account, permission, cap,
  // expiry, prefix); whether it is revoked must still be read per request, so
  // a key revoked by another process fails on its next request. nullopt when
  // the token is not a cached API key; then call authenticate().
  std::optional<Principal> cached(const Request& req) const;
  // Refuses a cached principal's key as authenticate() would, from the key's
  // row read in the caller's statement: whether a row with the key's id and
  // digest exists, is revoked, and has expired.
  static void check_key(const Principal& p, bool found, const std::string& stored_digest, bool revoked,
                        bool expired);

 private:
  OAuthVerifier* oauth_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, Principal> cache_;  // by key digest
};

}  // namespace scribe::api
