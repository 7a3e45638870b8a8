// `scribe projections list|rebuild NAME|all`.
#include <iostream>

#include "app/cli.h"
#include "common/db.h"
#include "common/log.h"
#include "projections/runner.h"

namespace scribe::app {

int projections(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {});
  if (args.help || args.positional.empty()) {
    std::cout << "usage: scribe projections list\n"
                 "       scribe projections rebuild NAME|all\n"
                 "\n"
                 "rebuild drops a projection's tables and replays every event from position 0.\n"
                 "Inline projections are rebuilt in one transaction that appends wait for;\n"
                 "asynchronous ones are reset and caught up while the service keeps running.\n"
                 "\noptions:\n"
              << kCommonHelp;
    return args.help ? 0 : 2;
  }
  const Settings settings = load_settings(args).settings;
  const Config& cfg = settings.server;
  configure_storage(settings);
  log::init(cfg.log_level);
  auto conn = db::open_connection(cfg.database_url);
  const std::string& verb = args.positional[0];
  if (verb == "list") {
    pqxx::read_transaction txn(*conn);
    for (auto* p : projections::all()) {
      std::cout << p->name() << "\t" << (p->is_inline() ? "inline" : "async");
      if (!p->is_inline()) std::cout << "\tlag=" << projections::lag(txn, p->name());
      std::cout << "\n";
    }
    return 0;
  }
  if (verb == "rebuild") {
    if (args.positional.size() != 2) throw std::invalid_argument("rebuild takes one NAME or 'all'");
    const std::string& which = args.positional[1];
    std::vector<projections::Projection*> targets;
    if (which == "all") {
      targets = projections::all();
    } else if (auto* p = projections::find(which)) {
      targets.push_back(p);
    } else {
      throw std::invalid_argument("no projection named '" + which + "'");
    }
    for (auto* p : targets) {
      auto started = std::chrono::steady_clock::now();
      int64_t n = projections::rebuild(*conn, *p);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cout << "rebuilt " << p->name() << ": " << n << " events in " << secs << " s\n";
    }
    return 0;
  }
  throw std::invalid_argument("unknown verb '" + verb + "'");
}

}  // namespace scribe::app
