// `scribe audit wallet [--account ID]`: replays every account stream through the
// domain's own fold and compares the result with what the projections say.
#include <iostream>

#include "app/cli.h"
#include "commands/account_commands.h"
#include "common/db.h"
#include "common/log.h"
#include "eventstore/event_store.h"
#include "projections/runner.h"
#include "domain/events.h"

namespace scribe::app {
namespace {

const db::Statement kAccountIds{"audit.account_ids",
                                "select distinct substr(stream_id, 9)::bigint from events "
                                "where stream_id like 'account-%' order by 1"};
const db::Statement kProjected{
    "audit.projected",
    "select a.balance_micros, (select balance_after_micros from wallet_ledger l "
    "where l.account_id = a.id order by event_position desc limit 1), "
    "(select count(*) from wallet_ledger l where l.account_id = a.id), a.held_micros, a.open_holds "
    "from accounts a where a.id = $1"};
const db::Statement kKeySpend{"audit.key_spend",
                              "select s.key_id, to_char(s.month, 'YYYY-MM'), s.settled_micros, s.held_micros "
                              "from key_monthly_spend s join api_keys k on k.id = s.key_id where k.account_id = $1"};

using Spend = std::pair<int64_t, int64_t>;  // settled, held

// Month-to-date spend per key: settled charges by month and holds in flight
// by the month they were placed, recomputed from the account's events.
int audit_key_spend(pqxx::transaction_base& txn, int64_t account_id, const account::State& state) {
  std::map<std::pair<int64_t, std::string>, std::pair<int64_t, int64_t>> expected;  // settled, held
  for (const auto& [k, v] : state.key_spend) expected[k].first += v;
  for (const auto& [id, h] : state.open_holds)
    if (h.key_id) expected[{*h.key_id, h.month}].second += h.amount;
  std::map<std::pair<int64_t, std::string>, std::pair<int64_t, int64_t>> projected;
  for (const auto& r : txn.exec_prepared(kKeySpend.name, account_id))
    projected[{r[0].as<int64_t>(), std::string(r[1].c_str())}] = Spend{r[2].as<int64_t>(), r[3].as<int64_t>()};
  int differences = 0;
  for (const auto& [k, v] : expected) {
    auto p = projected.count(k) ? projected[k] : Spend{0, 0};
    if (p != v) {
      std::cout << "account " << account_id << " key " << k.first << " month " << k.second << ": events say settled "
                << v.first << " held " << v.second << " micro-USD, key_monthly_spend says settled " << p.first
                << " held " << p.second << "\n";
      ++differences;
    }
  }
  for (const auto& [k, p] : projected)
    if (!expected.count(k) && p != Spend{0, 0}) {
      std::cout << "account " << account_id << " key " << k.first << " month " << k.second
                << ": key_monthly_spend has spend the events do not\n";
      ++differences;
    }
  return differences;
}

}  // namespace

int audit(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"account"});
  if (args.help || args.positional.empty() || args.positional[0] != "wallet") {
    std::cout << "usage: scribe audit wallet [--account ID]\n"
                 "\n"
                 "Recomputes each account's balance from its events and compares it with the\n"
                 "accounts and wallet_ledger projections. Prints every difference; exits 1 if\n"
                 "there is any, 0 when the books agree.\n"
                 "\noptions:\n"
                 "  --account ID         audit one account only\n"
              << kCommonHelp;
    return args.help ? 0 : 2;
  }
  const Settings settings = load_settings(args).settings;
  const Config& cfg = settings.server;
  configure_storage(settings);
  log::init(cfg.log_level);
  auto conn = db::open_connection(cfg.database_url);
  // One snapshot for everything, so that events and projections are compared
  // at the same instant.
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(*conn);
  std::vector<int64_t> ids;
  if (auto a = args.get("account")) {
    ids.push_back(std::stoll(*a));
  } else {
    for (const auto& r : txn.exec_prepared(kAccountIds.name)) ids.push_back(r[0].as<int64_t>());
  }
  int differences = 0;
  const eventstore::GlobalPosition ledger_checkpoint = projections::checkpoint(txn, "wallet_ledger");
  for (int64_t id : ids) {
    auto events = eventstore::EventStore::read_stream(txn, account::stream_id(id));
    account::State state = account::fold(events);
    // Counted here from the events themselves, not with the projection's code,
    // so that a bug in the projection cannot hide from the audit. The ledger
    // is asynchronous, so it is compared with the events up to its checkpoint.
    int64_t money_events = 0;
    account::State at_checkpoint;
    for (const auto& e : events) {
      if (!(e.global <= ledger_checkpoint)) continue;
      account::apply(at_checkpoint, e.type, e.data);
      money_events += e.type == events::kWalletDeposited ||
                      (e.type == events::kWalletHoldSettled && e.data.at("charged_micros").get<int64_t>() > 0);
    }
    if (!state.exists) {
      std::cout << "account " << id << ": no AccountOpened event\n";
      ++differences;
      continue;
    }
    auto res = txn.exec_prepared(kProjected.name, id);
    if (res.empty()) {
      std::cout << "account " << id << ": missing from the accounts projection\n";
      ++differences;
      continue;
    }
    int64_t projected = res[0][0].as<int64_t>();
    if (projected != state.balance) {
      std::cout << "account " << id << ": balance from events " << state.balance << " micro-USD, accounts projection "
                << projected << "\n";
      ++differences;
    }
    if (res[0][3].as<int64_t>() != state.held() ||
        res[0][4].as<int64_t>() != static_cast<int64_t>(state.open_holds.size())) {
      std::cout << "account " << id << ": open holds from events " << state.open_holds.size() << " of " << state.held()
                << " micro-USD, accounts projection " << res[0][4].as<int64_t>() << " of " << res[0][3].as<int64_t>()
                << "\n";
      ++differences;
    }
    int64_t ledger_rows = res[0][2].as<int64_t>();
    int64_t ledger_balance = res[0][1].is_null() ? 0 : res[0][1].as<int64_t>();
    if (ledger_rows != money_events || ledger_balance != at_checkpoint.balance) {
      std::cout << "account " << id << ": wallet_ledger has " << ledger_rows << " entries ending at " << ledger_balance
                << ", the events up to its checkpoint have " << money_events << " money events ending at "
                << at_checkpoint.balance << "\n";
      ++differences;
    }
    differences += audit_key_spend(txn, id, state);
  }
  std::cout << "audited " << ids.size() << " account(s): " << differences << " difference(s)\n";
  return differences == 0 ? 0 : 1;
}

}  // namespace scribe::app
