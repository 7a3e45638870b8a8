#include "commands/webhook_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/secrets.h"
#include "domain/webhook.h"
#include "eventstore/event_store.h"

namespace scribe::commands {
namespace {

const db::Statement kNextWebhookId{"commands.next_webhook_id", "select nextval('webhook_ids')"};

// Loads the key's webhook stream, decides, and appends at the loaded version.
// Writers of one key queue on the stream's lock (test requests come in
// bursts); a writer that appends without it still makes the append fail, and
// the decision is then made again on the new state.
std::vector<eventstore::RecordedEvent> execute_on_webhook(
    const eventstore::EventStore& store, pqxx::connection& conn, int64_t key_id,
    const std::function<std::optional<eventstore::NewEvent>(const webhook::State&)>& decide, const Meta& meta) {
  const std::string sid = webhook::stream_id(key_id);
  return retry_on_conflict(
      [&]() -> std::vector<eventstore::RecordedEvent> {
        pqxx::work txn(conn);
        eventstore::EventStore::lock_stream(txn, sid);
        auto state = webhook::fold(eventstore::EventStore::read_stream(txn, sid));
        auto event = decide(state);
        if (!event) return {};
        event->metadata = meta.to_json();
        auto recorded = store.append(txn, sid, eventstore::ExpectedVersion::exact(state.version), {*event});
        eventstore::EventStore::commit(txn);
        return recorded;
      },
      "webhook is too busy; retry the request");
}

}  // namespace

RegisteredWebhook register_webhook(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                                   int64_t key_id, const std::string& url, const std::vector<std::string>& events,
                                   const Meta& meta) {
  int64_t id;
  {
    // Drawn outside the appending transaction (see account_commands.cpp).
    pqxx::nontransaction txn(conn);
    id = txn.exec_prepared1(kNextWebhookId.name)[0].as<int64_t>();
  }
  execute_on_webhook(
      store, conn, key_id,
      [&](const webhook::State& s) { return webhook::registered(s, account_id, key_id, id, url, events); }, meta);
  return {id, webhook_signing_secret(conn, id)};
}

bool revoke_webhook(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, int64_t key_id,
                    const Meta& meta) {
  return !execute_on_webhook(
              store, conn, key_id, [&](const webhook::State& s) { return webhook::revoked(s, account_id, key_id); },
              meta)
              .empty();
}

int64_t request_webhook_test(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                             int64_t key_id, const Meta& meta) {
  auto recorded = execute_on_webhook(
      store, conn, key_id,
      [&](const webhook::State& s) { return std::optional(webhook::test_requested(s, account_id, key_id)); }, meta);
  return webhook::delivery_id(recorded.front().global.position, false);
}

std::string webhook_signing_secret(pqxx::connection& conn, int64_t webhook_id) {
  return "whsec_" + crypto::hmac_sha256_hex(secrets::get(conn, "webhook"), "webhook:" + std::to_string(webhook_id));
}

}  // namespace scribe::commands
