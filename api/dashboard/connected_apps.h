#pragma once
#include <cstdint>
#include <pqxx/pqxx>
#include <string>

#include "commands/account_commands.h"
#include "common/json.h"
#include "eventstore/event_store.h"

// Connected apps: the OAuth clients that hold a live grant of a person's
// account, and disconnecting one. What the console's page
// (/dashboard/api/v1/connected-apps) and `scribe admin apps` both show and do.
namespace scribe::api::dashboard {

// The clients with at least one grant of `account_id` that is not revoked,
// oldest connection first; the built-in console is not an app and is left
// out. Each: {client_id, client_name, kind (dcr | cimd), redirect_hosts[],
// resources[] (the union of its grants'), connected_at (its first live
// grant), last_token_at (the newest token issued to it), grants (count)}.
Json list_connected_apps(pqxx::connection& conn, int64_t account_id);

// Revokes every grant of `client_id` for `account_id` and withdraws the
// person's remembered consent, so its access and refresh tokens fail on their
// next request on every process and the next authorization asks again.
// Running jobs finish. 404 not_found when the client held no live grant of
// the account (its remembered consent, if any, is withdrawn all the same),
// and for the console client, which is no connected app.
void disconnect_app(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                    const std::string& client_id, const commands::Meta& meta);

}  // namespace scribe::api::dashboard
