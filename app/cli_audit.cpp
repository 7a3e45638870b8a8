// `scribe audit wallet [--account ID]`: replays every account stream through the
// domain's own fold and compares the result with what the projections say.
#include <iostream>

#include "app/cli.h"
#include "commands/account_commands.h"
#include "common/db.h"
#include "common/log.h"
#include "eventstore/event_store.h"
#include "domain/events.h"

namespace scribe::cli {
namespace {

const db::Statement kAccountIds{"audit.account_ids",
                                "select distinct substr(stream_id, 9)::bigint from events "
                                "where stream_id like 'account-%' order by 1"};
const db::Statement kProjected{"audit.projected",
                               "select a.balance_micros, (select balance_after_micros from wallet_ledger l "
                               "where l.account_id = a.id order by event_position desc limit 1), "
                               "(select count(*) from wallet_ledger l where l.account_id = a.id) "
                               "from accounts a where a.id = $1"};

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
  Config cfg = Config::from_env();
  apply_common(args, cfg);
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
  for (int64_t id : ids) {
    auto events = es::EventStore::read_stream(txn, account::stream_id(id));
    account::State state = account::fold(events);
    int64_t deposits = 0;
    for (const auto& e : events) deposits += e.type == events::kWalletDeposited;
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
    int64_t ledger_rows = res[0][2].as<int64_t>();
    int64_t ledger_balance = res[0][1].is_null() ? 0 : res[0][1].as<int64_t>();
    if (ledger_rows != deposits || ledger_balance != state.balance) {
      std::cout << "account " << id << ": wallet_ledger has " << ledger_rows << " entries ending at "
                << ledger_balance << ", events have " << deposits << " money events ending at " << state.balance
                << " (the ledger may be lagging; see 'scribe projections list')\n";
      ++differences;
    }
  }
  std::cout << "audited " << ids.size() << " account(s): " << differences << " difference(s)\n";
  return differences == 0 ? 0 : 1;
}

}  // namespace scribe::cli
