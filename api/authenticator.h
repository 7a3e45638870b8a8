#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
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
// OAuth access token and handed to the OAuth verifier (api/oauth/
// token_verifier.h). With no verifier configured every such token fails
// verification (401 unauthenticated), as the spec says for a token that
// cannot be verified.
class OAuthVerifier {
 public:
  virtual ~OAuthVerifier() = default;
  // The token's principal; nullopt when the token is not known (the
  // authenticator then refuses it from memory for a while, as an unknown
  // key); throws the 401 for a token known to be invalid (revoked, expired).
  // A principal with a `digest` is cached for handler_checks_key routes.
  virtual std::optional<Principal> verify(pqxx::transaction_base& txn, const std::string& token) = 0;
};

// Failed authentications per client address, in this process's memory: a
// generic cell rate algorithm like the request limiter (rate_limiter.h), but
// keyed by address and never on the database, since what it protects is the
// database (every unknown key would otherwise cost a lookup). `per_minute`
// failures are allowed per minute, in a burst of up to as many.
class AuthFailures {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AuthFailures(int per_minute);
  // Counts one failure from `address`.
  void record(const std::string& address, Clock::time_point now = Clock::now());
  // 0 while `address` may still fail, else the whole seconds (>= 1) until it may.
  int64_t wait_seconds(const std::string& address, Clock::time_point now = Clock::now()) const;

 private:
  std::chrono::nanoseconds interval_;
  std::chrono::nanoseconds window_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> tat_;  // theoretical arrival time by address
};

class Authenticator {
 public:
  explicit Authenticator(OAuthVerifier* oauth = nullptr);
  Authenticator(const Authenticator& other) : Authenticator(other.oauth_) {}
  Principal authenticate(pqxx::transaction_base& txn, const Request& req) const;

  // What can be decided without the database, called before a connection is
  // leased: 429 rate_limited for an address over its failed-authentication
  // budget (limits::kAuthFailuresPerMinute), unless the token is a key or
  // access token this process has authenticated before; 401 for a malformed
  // key and for a key or access token found unknown in the last
  // limits::kUnknownKeyCacheSeconds. Returns when the request must go on to
  // authenticate().
  void screen(const Request& req) const;
  // Counts a 401 of a request that presented a Bearer token against its
  // address (requests without credentials are not authentication attempts),
  // and forgets the token as a known credential.
  void record_failure(const Request& req) const;
  // API-key rows read from the database by this process (for /metrics, and
  // for tests that check a refusal cost no lookup).
  uint64_t lookups() const { return lookups_.load(); }

  // The caller's API key or OAuth access token from a cache of credentials
  // this process has authenticated before, without a database read; verified
  // is false (see Principal). Only what never changes for a credential is
  // cached (a key's id, account, permission, cap, expiry, prefix; a token's
  // account, client, resources, expiry); whether it is revoked must still be
  // read per request (Authenticator::check_key, oauth::TokenVerifier::check),
  // so a credential revoked by another process fails on its next request.
  // nullopt when the token is not cached; then call authenticate().
  std::optional<Principal> cached(const Request& req) const;
  // Refuses a cached principal's key as authenticate() would, from the key's
  // row read in the caller's statement: whether a row with the key's id and
  // digest exists, is revoked, and has expired.
  static void check_key(const Principal& p, bool found, const std::string& stored_digest, bool revoked, bool expired);

 private:
  void remember(const Principal& p) const;
  void remember_unknown(const std::string& digest) const;

  OAuthVerifier* oauth_;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, Principal> cache_;  // by credential digest
  // Digests of well-formed keys and of tokens found unknown, with when that stops counting.
  mutable std::unordered_map<std::string, std::chrono::steady_clock::time_point> unknown_;
  mutable AuthFailures failures_;
  mutable std::atomic<uint64_t> lookups_{0};
};

}  // namespace scribe::api
