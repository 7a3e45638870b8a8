// Writes the `wallet_ledger` table (asynchronous): every money event of every
// account with the balance after it, the account's billing history.
#include <unordered_map>

#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

// One index probe per account (newest entry), however long its history is.
const db::Statement kLastBalances{"wallet_ledger.last_balances",
                                  "select a.id, l.balance_after_micros from unnest($1::bigint[]) as a(id) "
                                  "cross join lateral (select balance_after_micros from wallet_ledger "
                                  "where account_id = a.id order by event_position desc limit 1) l"};
const db::Statement kInsertMany{
    "wallet_ledger.insert_many",
    "insert into wallet_ledger(event_position, account_id, kind, amount_micros, balance_after_micros, recorded_at) "
    "select p, a, k, m, b, r::timestamptz from jsonb_to_recordset($1::jsonb) "
    "as x(p bigint, a bigint, k text, m bigint, b bigint, r text)"};

struct Entry {
  int64_t account_id;
  const char* kind;
  int64_t amount;
};

// Which events move money, and by how much.
std::optional<Entry> money_entry(const eventstore::RecordedEvent& e) {
  if (e.type == events::kWalletDeposited)
    return Entry{e.data.at("account_id").get<int64_t>(), "deposit", e.data.at("amount_micros").get<int64_t>()};
  if (e.type == events::kWalletHoldSettled && e.data.at("charged_micros").get<int64_t>() > 0)
    return Entry{e.data.at("account_id").get<int64_t>(), "charge", -e.data.at("charged_micros").get<int64_t>()};
  return std::nullopt;
}

// The rebuild's writer: starts from an empty ledger and is its only writer, so
// it carries each account's balance from batch to batch in memory instead of
// probing the table, and loads each batch with one COPY.
class WalletLedgerBulkWriter final : public BulkWriter {
 public:
  explicit WalletLedgerBulkWriter(std::string table) : table_(std::move(table)) {}
  void write(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) override {
    pqxx::stream_to out(txn, table_,
                        std::vector<std::string>{"event_position", "account_id", "kind", "amount_micros",
                                                 "balance_after_micros", "recorded_at"});
    for (const auto& e : events) {
      auto m = money_entry(e);
      if (!m) continue;
      int64_t& b = balance_[m->account_id];
      b += m->amount;
      out << std::make_tuple(e.global.position, m->account_id, m->kind, m->amount, b, e.recorded_at);
    }
    out.complete();
  }

 private:
  std::string table_;
  std::unordered_map<int64_t, int64_t> balance_;
};

class WalletLedgerProjection final : public Projection {
 public:
  std::string name() const override { return "wallet_ledger"; }
  std::vector<std::string> tables() const override { return {"wallet_ledger"}; }
  bool is_inline() const override { return false; }
  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override { apply_batch(txn, {e}); }
  std::unique_ptr<BulkWriter> bulk_writer(const std::map<std::string, std::string>& shadow) override {
    return std::make_unique<WalletLedgerBulkWriter>(shadow.at("wallet_ledger"));
  }

  // One query for the accounts' last balances and one insert for the batch,
  // the running balance computed here in event order.
  void apply_batch(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) override {
    std::vector<std::pair<const eventstore::RecordedEvent*, Entry>> entries;
    for (const auto& e : events)
      if (auto m = money_entry(e)) entries.emplace_back(&e, *m);
    if (entries.empty()) return;
    std::unordered_map<int64_t, int64_t> balance;
    std::string ids = "{";
    for (const auto& [e, m] : entries)
      if (balance.emplace(m.account_id, 0).second) ids += (ids.size() > 1 ? "," : "") + std::to_string(m.account_id);
    ids += "}";
    for (const auto& r : txn.exec_prepared(kLastBalances.name, ids)) balance[r[0].as<int64_t>()] = r[1].as<int64_t>();
    Json rows = Json::array();
    for (const auto& [e, m] : entries) {
      int64_t& b = balance[m.account_id];
      b += m.amount;
      rows.push_back({{"p", e->global.position},
                      {"a", m.account_id},
                      {"k", m.kind},
                      {"m", m.amount},
                      {"b", b},
                      {"r", e->recorded_at}});
    }
    txn.exec_prepared(kInsertMany.name, rows.dump());
  }
};

}  // namespace

Projection& wallet_ledger_projection() {
  static WalletLedgerProjection p;
  return p;
}

}  // namespace scribe::projections
