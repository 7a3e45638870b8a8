#include "commands/account_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/db.h"
#include "common/error.h"
#include "eventstore/event_store.h"

namespace scribe::commands {
namespace {

const db::Statement kNextAccountId{"commands.next_account_id", "select nextval('account_ids')"};
const db::Statement kNextKeyId{"commands.next_api_key_id", "select nextval('api_key_ids')"};
const db::Statement kKeyAccount{"commands.key_account", "select account_id from api_keys where id = $1"};
const db::Statement kEmailTaken{"commands.email_taken", "select 1 from accounts where lower(email) = lower($1)"};

int64_t next_id(pqxx::connection& conn, const db::Statement& seq) {
  // Drawn outside the appending transaction: nextval may assign a transaction
  // id, and an append must be the first write of its transaction.
  pqxx::nontransaction txn(conn);
  return txn.exec_prepared1(seq.name)[0].as<int64_t>();
}

}  // namespace

Json Meta::to_json() const {
  Json j = {{"principal", principal}};
  if (!request_id.empty()) j["request_id"] = request_id;
  return j;
}

account::State load_account(pqxx::transaction_base& txn, int64_t account_id) {
  return account::fold(eventstore::EventStore::read_stream(txn, account::stream_id(account_id)));
}

std::vector<eventstore::RecordedEvent> execute_on_account(
    const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
    const std::function<std::vector<eventstore::NewEvent>(const account::State&)>& decide, const Meta& meta) {
  return retry_on_conflict(
      [&]() -> std::vector<eventstore::RecordedEvent> {
        // Read, decide, then append at the version read: the append commits in a
        // transaction shared with concurrent commands (group commit), and the
        // expected version makes a decision on a stale read fail and start over.
        account::State state;
        {
          pqxx::read_transaction txn(conn);
          state = load_account(txn, account_id);
        }
        auto events = decide(state);
        if (events.empty()) return {};
        for (auto& e : events) e.metadata = meta.to_json();
        return store.append_and_commit(conn, {{account::stream_id(account_id),
                                               eventstore::ExpectedVersion::exact(state.version), std::move(events)}});
      },
      "account is too busy; retry the request");
}

int64_t open_account(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& email,
                     plans::Tier plan, const Meta& meta) {
  {
    pqxx::nontransaction txn(conn);
    if (!txn.exec_prepared(kEmailTaken.name, email).empty())
      throw Error::invalid("email", "an account with this email already exists");
  }
  int64_t id = next_id(conn, kNextAccountId);
  auto events = account::open(id, email, plan);
  for (auto& e : events) e.metadata = meta.to_json();
  store.append_and_commit(conn,
                          {{account::stream_id(id), eventstore::ExpectedVersion::no_stream(), std::move(events)}});
  return id;
}

void deposit(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, money::Micros amount,
             const std::string& reference, const Meta& meta) {
  execute_on_account(
      store, conn, account_id, [&](const account::State& s) { return account::deposit(s, amount, reference); }, meta);
}

void change_plan(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, plans::Tier plan,
                 const Meta& meta) {
  execute_on_account(
      store, conn, account_id, [&](const account::State& s) { return account::change_plan(s, plan); }, meta);
}

CreatedKey create_key(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                      const std::string& name, apikey::Permission permission, std::optional<money::Micros> monthly_cap,
                      std::optional<TimePoint> expires_at, const Meta& meta) {
  CreatedKey created{next_id(conn, kNextKeyId), apikey::generate()};
  account::NewKey key{
      created.key_id, name,      apikey::hash(created.plaintext), apikey::display_prefix(created.plaintext), permission,
      monthly_cap,    expires_at};
  execute_on_account(
      store, conn, account_id, [&](const account::State& s) { return account::create_key(s, key, now()); }, meta);
  return created;
}

void revoke_key(const eventstore::EventStore& store, pqxx::connection& conn, int64_t key_id, const Meta& meta) {
  int64_t account_id;
  {
    pqxx::nontransaction txn(conn);
    auto res = txn.exec_prepared(kKeyAccount.name, key_id);
    if (res.empty()) throw Error::not_found("API key");
    account_id = res[0][0].as<int64_t>();
  }
  execute_on_account(
      store, conn, account_id, [&](const account::State& s) { return account::revoke_key(s, key_id); }, meta);
}

}  // namespace scribe::commands
