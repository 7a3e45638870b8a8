// Writes the `accounts` table (inline): one row per account with plan and
// wallet balance, as GET /me shows them.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{"accounts.insert",
                            "insert into accounts(id, email, plan, balance_micros, created_at, updated_at) "
                            "values ($1, $2, $3, 0, $4::timestamptz, $4::timestamptz)"};
const db::Statement kPlan{"accounts.set_plan",
                          "update accounts set plan = $2, updated_at = $3::timestamptz where id = $1"};
const db::Statement kBalance{"accounts.add_balance",
                             "update accounts set balance_micros = balance_micros + $2, "
                             "updated_at = $3::timestamptz where id = $1"};

class AccountsProjection final : public Projection {
 public:
  std::string name() const override { return "accounts"; }
  std::vector<std::string> tables() const override { return {"accounts"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const es::RecordedEvent& e) override {
    const auto& d = e.data;
    if (e.type == events::kAccountOpened) {
      txn.exec_prepared(kInsert.name, d.at("account_id").get<int64_t>(), d.at("email").get<std::string>(),
                        d.at("plan").get<std::string>(), e.recorded_at);
    } else if (e.type == events::kPlanChanged) {
      txn.exec_prepared(kPlan.name, d.at("account_id").get<int64_t>(), d.at("to").get<std::string>(), e.recorded_at);
    } else if (e.type == events::kWalletDeposited) {
      txn.exec_prepared(kBalance.name, d.at("account_id").get<int64_t>(), d.at("amount_micros").get<int64_t>(),
                        e.recorded_at);
    }
  }
};

}  // namespace

Projection& accounts_projection() {
  static AccountsProjection p;
  return p;
}

}  // namespace scribe::projections
