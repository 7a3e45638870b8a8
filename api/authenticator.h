#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>

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
  Principal authenticate(pqxx::transaction_base& txn, const Request& req) const;

 private:
  OAuthVerifier* oauth_;
};

}  // namespace scribe::api
