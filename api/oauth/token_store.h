#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "commands/account_commands.h"
#include "domain/oauth_exchange.h"
#include "eventstore/event_store.h"

// Authorization codes and tokens: operational rows (oauth_codes,
// oauth_tokens) holding only SHA-256 hashes, decided by domain/oauth_exchange.h.
// A grant is an event (GrantIssued) appended in the same transaction that
// spends its code and writes its first tokens, so a code is exchanged at
// most once even when two requests race: the second finds the grant's stream
// taken and is treated as a reuse.
namespace scribe::api::oauth {

struct CodeGrant {
  int64_t grant_id = 0;
  int64_t account_id = 0;
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  std::vector<std::string> resources;
};
// Stores a new code for `grant` (the grant id drawn with
// commands::next_grant_id) and returns it; it expires after `ttl_seconds`.
std::string store_code(pqxx::connection& conn, const CodeGrant& grant, int ttl_seconds);

struct IssuedTokens {
  std::string access_token;
  std::string refresh_token;
  int expires_in = 0;
  std::vector<std::string> resources;  // the access token's
};

// What narrows the resources of a token request: given what the code or
// grant holds, the access token's resources, or nullopt for invalid_target.
using NarrowResources = std::function<std::optional<std::vector<std::string>>(const std::vector<std::string>&)>;

enum class ExchangeError { None, InvalidGrant, InvalidTarget };
struct CodeExchange {
  scribe::oauth::CodeDecision decision = scribe::oauth::CodeDecision::Unknown;
  ExchangeError error = ExchangeError::InvalidGrant;
  std::optional<IssuedTokens> tokens;
  int64_t grant_id = 0;  // of a reused code: the grant to revoke
};
// Exchanges a code (grant_type=authorization_code). On success the code is
// spent, GrantIssued appended and an access and a refresh token written, in
// one transaction. A reused code's grant is revoked (GrantRevoked) before
// this returns.
CodeExchange exchange_code(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& code,
                           const scribe::oauth::CodeRequest& req, const NarrowResources& narrow, int access_ttl_seconds,
                           const commands::Meta& meta);

struct RefreshExchange {
  scribe::oauth::RefreshDecision decision = scribe::oauth::RefreshDecision::Unknown;
  ExchangeError error = ExchangeError::InvalidGrant;
  std::optional<IssuedTokens> tokens;
};
// Rotates a refresh token (grant_type=refresh_token): a new pair, the old
// token marked rotated. A retry within the grace gets a fresh pair and the
// first rotation's pair is revoked; a replay after it revokes the grant.
RefreshExchange exchange_refresh(const eventstore::EventStore& store, pqxx::connection& conn,
                                 const std::string& refresh_token, const std::string& client_id,
                                 const NarrowResources& narrow, int access_ttl_seconds, const commands::Meta& meta);

// RFC 7009: revokes `token` when it exists and was issued to `client_id`:
// an access token alone, a refresh token with its whole grant. Unknown
// tokens and other clients' tokens are left alone (the caller answers 200
// either way).
void revoke_token(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& token,
                  const std::string& client_id, const commands::Meta& meta);

// Deletes codes and tokens expired for a day and browser sessions past their
// end; returns how many rows went (housekeeping).
int sweep_expired(pqxx::connection& conn);

}  // namespace scribe::api::oauth
