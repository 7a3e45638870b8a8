#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"

// What the token endpoint decides, as pure functions of the stored rows
// (api/oauth/ reads them, acts on the decision): PKCE, the single use of
// authorization codes, and the rotation of refresh tokens with its grace for
// a client's concurrent retry. docs/oauth_wire_rules.md has the sources.
namespace scribe::oauth {

// PKCE (RFC 7636). A code_challenge is the base64url SHA-256 of a verifier:
// 43 characters. A verifier is 43-128 characters of [A-Za-z0-9-._~].
bool is_valid_code_challenge(std::string_view challenge);
bool is_valid_code_verifier(std::string_view verifier);
// S256 only (the only method this server accepts; `plain` is refused at the
// authorization endpoint). Compared in constant time.
bool verify_s256(std::string_view verifier, std::string_view challenge);

// An authorization code's row, as the exchange found it.
struct CodeRow {
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  TimePoint expires_at;
  bool used = false;  // already exchanged (before this request)
};
struct CodeRequest {
  std::string client_id;
  std::string redirect_uri;  // empty when absent
  std::string code_verifier;
};
enum class CodeDecision {
  Issue,          // exchange it
  Unknown,        // no such code (invalid_grant)
  Reused,         // exchanged before: invalid_grant, and the grant it issued is revoked
  Expired,        // invalid_grant
  WrongClient,    // invalid_grant (RFC 6749 4.1.3: issued to another client)
  WrongRedirect,  // invalid_grant (redirect_uri differs from the authorization request's)
  WrongVerifier,  // invalid_grant (PKCE)
};
// `row` is nullopt for an unknown code. The order matters: a reused code is
// reported (and its grant revoked) whoever presents it, since its second
// presentation means it leaked (OAuth 2.1 4.1.3 and 7.5.3).
CodeDecision decide_code(const std::optional<CodeRow>& row, const CodeRequest& req, TimePoint now);
std::string_view describe(CodeDecision d);

// A refresh token's row, with its grant's state.
struct RefreshRow {
  std::string client_id;
  TimePoint expires_at;
  bool revoked = false;        // the token itself
  bool grant_revoked = false;  // its grant
  std::optional<TimePoint> rotated_at;
};
enum class RefreshDecision {
  Rotate,        // issue a new pair; this token is rotated now
  RetryInGrace,  // rotated less than the grace ago: a new pair; the first rotation's pair is revoked
  Replayed,      // rotated longer ago: invalid_grant, and the whole grant is revoked
  Unknown,       // invalid_grant
  Expired,       // invalid_grant
  Revoked,       // invalid_grant (the token or its grant)
  WrongClient,   // invalid_grant
};
RefreshDecision decide_refresh(const std::optional<RefreshRow>& row, std::string_view client_id, TimePoint now,
                               std::chrono::seconds grace);
std::string_view describe(RefreshDecision d);

}  // namespace scribe::oauth
