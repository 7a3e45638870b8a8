#pragma once
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "commands/account_commands.h"
#include "common/time.h"
#include "domain/oauth.h"
#include "eventstore/event_store.h"

// Commands on OAuth clients, grants and consents (domain/oauth.h). Tokens and
// codes are operational rows, not events (api/oauth/token_store.h); what a
// person decided (consent, revocation) and what exists (clients, grants) is
// in the log.
namespace scribe::commands {

// Registers a client: ClientRegistered on its new stream. A DCR client id is
// random, so its stream never exists yet. A metadata-document client is
// registered again (the same event on its existing stream) when its fetched
// document names another client name or other redirect URIs, or after it
// expired; otherwise nothing is appended. Returns whether it appended.
bool register_client(const eventstore::EventStore& store, pqxx::connection& conn, const oauth::ClientRecord& client,
                     const Meta& meta);

// ClientUsed when the client's last recorded use (oauth_clients) is older
// than limits::kOAuthClientUsedEverySeconds, so an active client is written
// at most daily. Unknown or first-party clients: nothing.
void record_client_use(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& client_id,
                       const Meta& meta);

// ClientExpired for up to `limit` clients not used (nor registered) since
// `unused_since`; returns how many. A token request from an expired DCR
// client is 401 invalid_client (it registers again); an expired metadata-
// document client is registered again at its next authorization.
int expire_unused_clients(const eventstore::EventStore& store, pqxx::connection& conn, TimePoint unused_since,
                          int limit, const Meta& meta);

// Remembered consent of a person for a client (oauth_consents).
void give_consent(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                  const std::string& client_id, const Meta& meta);
void withdraw_consent(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                      const std::string& client_id, const Meta& meta);

// Grants. The id is drawn when the authorization code is issued; the grant is
// appended when the code is first exchanged (GrantIssued on a new stream; a
// second issue of the same id is a ConcurrencyError).
int64_t next_grant_id(pqxx::connection& conn);
void issue_grant(const eventstore::EventStore& store, pqxx::connection& conn, int64_t grant_id, int64_t account_id,
                 const std::string& client_id, const std::vector<std::string>& resources, const Meta& meta);
// GrantRevoked unless the grant is unknown or revoked already; returns whether it appended.
bool revoke_grant(const eventstore::EventStore& store, pqxx::connection& conn, int64_t grant_id,
                  const std::string& reason, const Meta& meta);
// Every live grant of the person for the client, and the remembered consent
// (a connected app disconnected: it must ask again). Returns the grants revoked.
int revoke_client_for_account(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                              const std::string& client_id, const Meta& meta);

}  // namespace scribe::commands
