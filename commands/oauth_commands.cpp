#include "commands/oauth_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/db.h"
#include "domain/limits.h"

namespace scribe::commands {
namespace {

const db::Statement kClientRow{"oauth_commands.client_row",
                               "select client_name, redirect_uris::text, deleted_at is not null, "
                               "coalesce(last_used_at, registered_at) < now() - make_interval(secs => $2) "
                               "from oauth_clients where client_id = $1"};
const db::Statement kUnusedClients{"oauth_commands.unused_clients",
                                   "select client_id from oauth_clients where deleted_at is null "
                                   "and coalesce(last_used_at, registered_at) < $1::timestamptz "
                                   "order by coalesce(last_used_at, registered_at) limit $2"};
const db::Statement kNextGrantId{"oauth_commands.next_grant_id", "select nextval('oauth_grant_ids')"};
const db::Statement kLiveGrants{"oauth_commands.live_grants",
                                "select id from oauth_grants where account_id = $1 and client_id = $2 "
                                "and revoked_at is null order by id"};

std::vector<eventstore::RecordedEvent> append(const eventstore::EventStore& store, pqxx::connection& conn,
                                              const std::string& stream, eventstore::ExpectedVersion expected,
                                              std::vector<eventstore::NewEvent> events, const Meta& meta) {
  for (auto& e : events) e.metadata = meta.to_json();
  return store.append_and_commit(conn, {{stream, expected, std::move(events)}});
}

// Read a stream, decide, append at the version read; again on a lost race.
template <typename State>
bool decide_on(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& stream,
               State (*fold)(const std::vector<eventstore::RecordedEvent>&),
               const std::function<std::vector<eventstore::NewEvent>(const State&)>& decide, const Meta& meta) {
  return retry_on_conflict(
      [&] {
        State state;
        {
          pqxx::read_transaction txn(conn);
          state = fold(eventstore::EventStore::read_stream(txn, stream));
        }
        auto events = decide(state);
        if (events.empty()) return false;
        append(store, conn, stream, eventstore::ExpectedVersion::exact(state.version), std::move(events), meta);
        return true;
      },
      "too many concurrent changes; retry the request");
}

}  // namespace

bool register_client(const eventstore::EventStore& store, pqxx::connection& conn, const oauth::ClientRecord& client,
                     const Meta& meta) {
  if (client.kind == oauth::ClientKind::Dcr) {
    append(store, conn, oauth::client_stream(client.client_id), eventstore::ExpectedVersion::no_stream(),
           {oauth::client_registered(client)}, meta);
    return true;
  }
  {
    pqxx::nontransaction txn(conn);
    auto res = txn.exec_prepared(kClientRow.name, client.client_id, 0);
    if (!res.empty()) {
      const auto& row = res[0];
      const std::optional<std::string> name =
          row[0].is_null() ? std::nullopt : std::optional<std::string>(row[0].as<std::string>());
      const bool same = name == client.client_name &&
                        Json::parse(row[1].as<std::string>()) == Json(client.redirect_uris) && !row[2].as<bool>();
      if (same) return false;
    }
  }
  // Any version: a metadata document's latest fetch is what the client is.
  append(store, conn, oauth::client_stream(client.client_id), eventstore::ExpectedVersion::any(),
         {oauth::client_registered(client)}, meta);
  return true;
}

void record_client_use(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& client_id,
                       const Meta& meta) {
  {
    pqxx::nontransaction txn(conn);
    auto res = txn.exec_prepared(kClientRow.name, client_id, limits::kOAuthClientUsedEverySeconds);
    if (res.empty() || res[0][2].as<bool>() || !res[0][3].as<bool>()) return;
  }
  append(store, conn, oauth::client_stream(client_id), eventstore::ExpectedVersion::any(),
         {oauth::client_used(client_id)}, meta);
}

int expire_unused_clients(const eventstore::EventStore& store, pqxx::connection& conn, TimePoint unused_since,
                          int limit, const Meta& meta) {
  std::vector<std::string> ids;
  {
    pqxx::nontransaction txn(conn);
    for (const auto& row : txn.exec_prepared(kUnusedClients.name, to_iso8601(unused_since), limit))
      ids.push_back(row[0].as<std::string>());
  }
  for (const auto& id : ids)
    append(store, conn, oauth::client_stream(id), eventstore::ExpectedVersion::any(), {oauth::client_expired(id)},
           meta);
  return static_cast<int>(ids.size());
}

void give_consent(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                  const std::string& client_id, const Meta& meta) {
  decide_on<oauth::ConsentState>(
      store, conn, oauth::consents_stream(account_id), oauth::fold_consents,
      [&](const oauth::ConsentState& s) { return oauth::give_consent(s, account_id, client_id); }, meta);
}

void withdraw_consent(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                      const std::string& client_id, const Meta& meta) {
  decide_on<oauth::ConsentState>(
      store, conn, oauth::consents_stream(account_id), oauth::fold_consents,
      [&](const oauth::ConsentState& s) { return oauth::withdraw_consent(s, account_id, client_id); }, meta);
}

int64_t next_grant_id(pqxx::connection& conn) {
  // Outside any appending transaction (nextval may assign a transaction id).
  pqxx::nontransaction txn(conn);
  return txn.exec_prepared1(kNextGrantId.name)[0].as<int64_t>();
}

void issue_grant(const eventstore::EventStore& store, pqxx::connection& conn, int64_t grant_id, int64_t account_id,
                 const std::string& client_id, const std::vector<std::string>& resources, const Meta& meta) {
  append(store, conn, oauth::grant_stream(grant_id), eventstore::ExpectedVersion::no_stream(),
         {oauth::grant_issued(grant_id, account_id, client_id, resources)}, meta);
}

bool revoke_grant(const eventstore::EventStore& store, pqxx::connection& conn, int64_t grant_id,
                  const std::string& reason, const Meta& meta) {
  return decide_on<oauth::GrantState>(
      store, conn, oauth::grant_stream(grant_id), oauth::fold_grant,
      [&](const oauth::GrantState& g) { return oauth::revoke_grant(g, grant_id, reason); }, meta);
}

int revoke_client_for_account(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                              const std::string& client_id, const Meta& meta) {
  std::vector<int64_t> grants;
  {
    pqxx::nontransaction txn(conn);
    for (const auto& row : txn.exec_prepared(kLiveGrants.name, account_id, client_id))
      grants.push_back(row[0].as<int64_t>());
  }
  int revoked = 0;
  for (int64_t id : grants)
    if (revoke_grant(store, conn, id, "user", meta)) ++revoked;
  withdraw_consent(store, conn, account_id, client_id, meta);
  return revoked;
}

}  // namespace scribe::commands
