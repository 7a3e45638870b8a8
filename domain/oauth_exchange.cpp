#include "domain/oauth_exchange.h"

#include <algorithm>

#include "common/crypto.h"

namespace scribe::oauth {
namespace {

bool is_base64url_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace

bool is_valid_code_challenge(std::string_view challenge) {
  return challenge.size() == 43 && std::all_of(challenge.begin(), challenge.end(), is_base64url_char);
}

bool is_valid_code_verifier(std::string_view verifier) {
  // RFC 7636 4.1: code-verifier = 43*128unreserved.
  return verifier.size() >= 43 && verifier.size() <= 128 && std::all_of(verifier.begin(), verifier.end(), [](char c) {
           return is_base64url_char(c) || c == '.' || c == '~';
         });
}

bool verify_s256(std::string_view verifier, std::string_view challenge) {
  if (!is_valid_code_verifier(verifier) || !is_valid_code_challenge(challenge)) return false;
  return crypto::constant_time_equal(crypto::sha256_base64url(verifier), challenge);
}

CodeDecision decide_code(const std::optional<CodeRow>& row, const CodeRequest& req, TimePoint now) {
  if (!row) return CodeDecision::Unknown;
  if (row->used) return CodeDecision::Reused;
  if (now > row->expires_at) return CodeDecision::Expired;
  if (req.client_id != row->client_id) return CodeDecision::WrongClient;
  if (req.redirect_uri != row->redirect_uri) return CodeDecision::WrongRedirect;
  if (!verify_s256(req.code_verifier, row->code_challenge)) return CodeDecision::WrongVerifier;
  return CodeDecision::Issue;
}

std::string_view describe(CodeDecision d) {
  switch (d) {
    case CodeDecision::Issue:
      return "ok";
    case CodeDecision::Unknown:
      return "the authorization code is not valid";
    case CodeDecision::Reused:
      return "the authorization code was already used; the tokens it issued are revoked";
    case CodeDecision::Expired:
      return "the authorization code has expired";
    case CodeDecision::WrongClient:
      return "the authorization code was issued to another client";
    case CodeDecision::WrongRedirect:
      return "redirect_uri does not match the authorization request";
    case CodeDecision::WrongVerifier:
      return "code_verifier does not match the code_challenge (S256)";
  }
  return "";
}

RefreshDecision decide_refresh(const std::optional<RefreshRow>& row, std::string_view client_id, TimePoint now,
                               std::chrono::seconds grace) {
  if (!row) return RefreshDecision::Unknown;
  if (row->grant_revoked || row->revoked) return RefreshDecision::Revoked;
  if (row->rotated_at) {
    // OAuth 2.1 4.3.1 / RFC 9700 4.14.2: a rotated refresh token presented
    // again means two parties hold it, unless it is the client's own retry
    // of a response it lost, which comes within seconds.
    if (now - *row->rotated_at > grace) return RefreshDecision::Replayed;
    if (client_id != row->client_id) return RefreshDecision::WrongClient;
    if (now > row->expires_at) return RefreshDecision::Expired;
    return RefreshDecision::RetryInGrace;
  }
  if (client_id != row->client_id) return RefreshDecision::WrongClient;
  if (now > row->expires_at) return RefreshDecision::Expired;
  return RefreshDecision::Rotate;
}

std::string_view describe(RefreshDecision d) {
  switch (d) {
    case RefreshDecision::Rotate:
    case RefreshDecision::RetryInGrace:
      return "ok";
    case RefreshDecision::Replayed:
      return "the refresh token was already used; the grant is revoked";
    case RefreshDecision::Unknown:
      return "the refresh token is not valid";
    case RefreshDecision::Expired:
      return "the refresh token has expired";
    case RefreshDecision::Revoked:
      return "the refresh token has been revoked";
    case RefreshDecision::WrongClient:
      return "the refresh token was issued to another client";
  }
  return "";
}

}  // namespace scribe::oauth
