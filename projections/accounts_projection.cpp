// Writes the `accounts` table (inline): one row per account with plan and
// wallet balance, as GET /me shows them.
#include <map>
#include <optional>

#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{
    "accounts.insert",
    "insert into accounts(id, email, plan, balance_micros, held_micros, open_holds, created_at, "
    "updated_at) values ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz)"};
const db::Statement kUpdate{"accounts.update",
                            "update accounts set plan = coalesce($2, plan), balance_micros = balance_micros + $3, "
                            "held_micros = held_micros + $4, open_holds = open_holds + $5, "
                            "updated_at = $6::timestamptz where id = $1"};

const db::Statement kKeyHeld{"key_monthly_spend.add_held",
                             "insert into key_monthly_spend(key_id, month, held_micros) "
                             "values ($1, to_date($2, 'YYYY-MM'), $3) on conflict (key_id, month) do update "
                             "set held_micros = key_monthly_spend.held_micros + excluded.held_micros"};
const db::Statement kKeySettled{"key_monthly_spend.add_settled",
                                "insert into key_monthly_spend(key_id, month, settled_micros) "
                                "values ($1, to_date($2, 'YYYY-MM'), $3) on conflict (key_id, month) do update "
                                "set settled_micros = key_monthly_spend.settled_micros + excluded.settled_micros"};

// What a run of events does to one account: folded first and written once,
// because updating one row thousands of times in one transaction (a rebuild)
// leaves a long chain of dead row versions that every later update must walk.
struct Change {
  bool opened = false;
  std::string email;
  std::optional<std::string> plan;
  int64_t balance_delta = 0;
  int64_t held_delta = 0;  // open holds' total and count (what /me subtracts)
  int64_t holds_delta = 0;
  std::string created_at;
  std::string updated_at;
};

// Month-to-date spend per API key: holds in flight (by the month they were
// placed) and settled charges (by the month they were settled).
void apply_key_spend(pqxx::work& txn, const eventstore::RecordedEvent& e) {
  const auto& d = e.data;
  if (!d.contains("key_id") || d.at("key_id").is_null()) return;
  const int64_t key = d.at("key_id").get<int64_t>();
  if (e.type == events::kWalletHoldPlaced) {
    txn.exec_prepared(kKeyHeld.name, key, d.at("month").get<std::string>(), d.at("amount_micros").get<int64_t>());
  } else if (e.type == events::kWalletHoldSettled) {
    int64_t charged = d.at("charged_micros").get<int64_t>();
    txn.exec_prepared(kKeyHeld.name, key, d.at("hold_month").get<std::string>(),
                      -(charged + d.at("released_micros").get<int64_t>()));
    txn.exec_prepared(kKeySettled.name, key, d.at("month").get<std::string>(), charged);
  } else if (e.type == events::kWalletHoldReleased) {
    txn.exec_prepared(kKeyHeld.name, key, d.at("hold_month").get<std::string>(), -d.at("amount_micros").get<int64_t>());
  }
}

class AccountsProjection final : public Projection {
 public:
  std::string name() const override { return "accounts"; }
  std::vector<std::string> tables() const override { return {"accounts", "key_monthly_spend"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override { apply_batch(txn, {e}); }

  void apply_batch(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) override {
    std::map<int64_t, Change> changes;
    for (const auto& e : events) {
      const auto& d = e.data;
      if (e.type == events::kAccountOpened) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        c.opened = true;
        c.email = d.at("email").get<std::string>();
        c.plan = d.at("plan").get<std::string>();
        c.created_at = c.updated_at = e.recorded_at;
      } else if (e.type == events::kPlanChanged) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        c.plan = d.at("to").get<std::string>();
        c.updated_at = e.recorded_at;
      } else if (e.type == events::kWalletDeposited) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        c.balance_delta += d.at("amount_micros").get<int64_t>();
        c.updated_at = e.recorded_at;
      } else if (e.type == events::kWalletHoldPlaced) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        c.held_delta += d.at("amount_micros").get<int64_t>();
        c.holds_delta += 1;
        c.updated_at = e.recorded_at;
      } else if (e.type == events::kWalletHoldSettled) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        const int64_t charged = d.at("charged_micros").get<int64_t>();
        c.balance_delta -= charged;
        c.held_delta -= charged + d.at("released_micros").get<int64_t>();
        c.holds_delta -= 1;
        c.updated_at = e.recorded_at;
      } else if (e.type == events::kWalletHoldReleased) {
        Change& c = changes[d.at("account_id").get<int64_t>()];
        c.held_delta -= d.at("amount_micros").get<int64_t>();
        c.holds_delta -= 1;
        c.updated_at = e.recorded_at;
      }
      apply_key_spend(txn, e);
    }
    for (const auto& [id, c] : changes) {
      if (c.opened)
        txn.exec_prepared(kInsert.name, id, c.email, *c.plan, c.balance_delta, c.held_delta, c.holds_delta,
                          c.created_at, c.updated_at);
      else txn.exec_prepared(kUpdate.name, id, c.plan, c.balance_delta, c.held_delta, c.holds_delta, c.updated_at);
    }
  }
};

}  // namespace

Projection& accounts_projection() {
  static AccountsProjection p;
  return p;
}

}  // namespace scribe::projections
