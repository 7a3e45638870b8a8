#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "common/json.h"
#include "domain/account.h"
#include "eventstore/event_store.h"

// Commands on the Account aggregate: load the stream, decide in domain/,
// append with the loaded version as the expected version. A concurrent writer
// makes the append fail with a concurrency error; the command then reloads and
// decides again, so two racing commands never both act on stale state.
//
// Every command that appends does so through the `store` it is given, so its
// events feed the inline projections that store was built with (the service's
// own: projections::inline_projections(), wired in app/).
namespace scribe::commands {

struct Meta {
  std::string principal;   // "admin", "key:<id>", ...
  std::string request_id;  // empty outside HTTP
  Json to_json() const;
};

std::vector<eventstore::RecordedEvent> execute_on_account(
    const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
    const std::function<std::vector<eventstore::NewEvent>(const account::State&)>& decide, const Meta& meta);

account::State load_account(pqxx::transaction_base& txn, int64_t account_id);

int64_t open_account(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& email,
                     plans::Tier plan, const Meta& meta);
void deposit(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, money::Micros amount,
             const std::string& reference, const Meta& meta);
void change_plan(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, plans::Tier plan,
                 const Meta& meta);

struct CreatedKey {
  int64_t key_id;
  std::string plaintext;  // shown once, never stored
};
CreatedKey create_key(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                      const std::string& name, apikey::Permission permission, std::optional<money::Micros> monthly_cap,
                      std::optional<TimePoint> expires_at, const Meta& meta);
// Finds the key's account through the api_keys read model, then decides on the account stream.
void revoke_key(const eventstore::EventStore& store, pqxx::connection& conn, int64_t key_id, const Meta& meta);

}  // namespace scribe::commands
