#include "workers/realtime_sweeper.h"

#include <algorithm>

#include "commands/realtime_commands.h"
#include "common/db.h"
#include "common/log.h"
#include "projections/inline_projections.h"

namespace scribe::workers {

RealtimeSweeper::RealtimeSweeper(std::string database_url, int stale_seconds)
    : url_(std::move(database_url)), stale_seconds_(stale_seconds) {
  thread_ = std::thread([this] { run(); });
}

RealtimeSweeper::~RealtimeSweeper() { stop(); }

void RealtimeSweeper::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RealtimeSweeper::run() {
  static const eventstore::EventStore store(projections::inline_projections());
  const commands::Meta meta{"housekeeping", ""};
  // A quarter of the window (a stale session is settled at most 25% late),
  // and at least every 5 s for ends requested with no owner left to finish.
  const auto every = std::chrono::milliseconds(std::clamp(stale_seconds_ * 250, 500, 5000));
  std::unique_ptr<pqxx::connection> conn;
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    try {
      if (!conn) conn = db::open_connection(url_);
      // The grace for a requested end: the owner's heartbeat (a few seconds)
      // sees it and ends the session itself; past this nobody will.
      const int grace = std::min(10, stale_seconds_);
      if (int n = commands::end_stale_sessions(store, *conn, stale_seconds_, meta, grace); n > 0)
        log::info("realtime sessions ended by housekeeping", {{"sessions", n}});
    } catch (const std::exception& e) {
      conn.reset();
      log::warn("realtime housekeeping failed", {{"error", e.what()}});
    }
    lock.lock();
    cv_.wait_for(lock, every, [this] { return stop_; });
  }
}

}  // namespace scribe::workers
