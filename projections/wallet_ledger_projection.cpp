// Writes the `wallet_ledger` table (asynchronous): every money event of every
// account with the balance after it, the account's billing history.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{
    "wallet_ledger.insert",
    "insert into wallet_ledger(event_position, account_id, kind, amount_micros, balance_after_micros, recorded_at) "
    "select $1, $2, $3, $4, coalesce((select balance_after_micros from wallet_ledger where account_id = $2 "
    "order by event_position desc limit 1), 0) + $4, $5::timestamptz"};

class WalletLedgerProjection final : public Projection {
 public:
  std::string name() const override { return "wallet_ledger"; }
  std::vector<std::string> tables() const override { return {"wallet_ledger"}; }
  bool is_inline() const override { return false; }
  void apply(pqxx::work& txn, const es::RecordedEvent& e) override {
    if (e.type == events::kWalletDeposited) {
      txn.exec_prepared(kInsert.name, e.global.position, e.data.at("account_id").get<int64_t>(), "deposit",
                        e.data.at("amount_micros").get<int64_t>(), e.recorded_at);
    }
  }
};

}  // namespace

Projection& wallet_ledger_projection() {
  static WalletLedgerProjection p;
  return p;
}

}  // namespace scribe::projections
