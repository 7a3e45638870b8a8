// Writes the `accounts` table (inline): one row per account with plan and
// wallet balance, as GET /me shows them.
#include <map>
#include <optional>

#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{"accounts.insert",
                            "insert into accounts(id, email, plan, balance_micros, created_at, updated_at) "
                            "values ($1, $2, $3, $4, $5::timestamptz, $6::timestamptz)"};
const db::Statement kUpdate{"accounts.update",
                            "update accounts set plan = coalesce($2, plan), balance_micros = balance_micros + $3, "
                            "updated_at = $4::timestamptz where id = $1"};

// What a run of events does to one account: folded first and written once,
// because updating one row thousands of times in one transaction (a rebuild)
// leaves a long chain of dead row versions that every later update must walk.
struct Change {
  bool opened = false;
  std::string email;
  std::optional<std::string> plan;
  int64_t balance_delta = 0;
  std::string created_at;
  std::string updated_at;
};

class AccountsProjection final : public Projection {
 public:
  std::string name() const override { return "accounts"; }
  std::vector<std::string> tables() const override { return {"accounts"}; }
  bool is_inline() const override { return true; }
  void apply(pqxx::work& txn, const es::RecordedEvent& e) override { apply_batch(txn, {e}); }

  void apply_batch(pqxx::work& txn, const std::vector<es::RecordedEvent>& events) override {
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
      }
    }
    for (const auto& [id, c] : changes) {
      if (c.opened)
        txn.exec_prepared(kInsert.name, id, c.email, *c.plan, c.balance_delta, c.created_at, c.updated_at);
      else
        txn.exec_prepared(kUpdate.name, id, c.plan, c.balance_delta, c.updated_at);
    }
  }
};

}  // namespace

Projection& accounts_projection() {
  static AccountsProjection p;
  return p;
}

}  // namespace scribe::projections
