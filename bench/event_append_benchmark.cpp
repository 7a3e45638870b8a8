// Event append throughput: N concurrent writers, each on its own connection and
// its own streams, appending with an exact expected version (so the version
// check runs), by one of two paths:
//   grouped      EventStore::append_and_commit, the path of the commands that
//                append on their own (quote, account and wallet commands,
//                worker stages and outcomes): concurrent appends share a
//                transaction written by a leader (eventstore/group_commit.cpp);
//   transaction  EventStore::append inside a pqxx::work that the writer then
//                commits, the path of commands that do more in the appending
//                transaction (create and retry hold the account's lock,
//                delete redacts, webhook commands queue on the key's lock).
//
//   SCRIBE_BENCH_DATABASE_URL   the database (migrated here first)      required
//   SCRIBE_BENCH_SECONDS        measured seconds per configuration     default 5
//   SCRIBE_BENCH_WARMUP_SECONDS unmeasured seconds before each          default 1
//   SCRIBE_BENCH_WRITERS        writer counts                          default 1,8,32
//   SCRIBE_BENCH_BATCHES        events per append                      default 1,100
//   SCRIBE_BENCH_STREAM_EVENTS  events per stream before a writer moves
//                               on to a fresh stream                   default 1000
//   SCRIBE_BENCH_LABEL          free text copied into the JSON lines   default ""
//   SCRIBE_BENCH_APPEND_PATHS   paths to measure                       default grouped,transaction
//   (the former SCRIBE_BENCH_DISABLE_NOTIFY diagnostic is gone with the
//    in-transaction NOTIFY trigger, see migrations/006_notify_after_commit.sql)
//
// Prints a table and one JSON line per configuration, beginning {"bench":"event_append".
// The store is built with EventStore::without_inline_projections(): this
// measures the event store alone, no read model.
#include <unistd.h>

#include <atomic>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <thread>
#include <tuple>

#include "bench/bench_util.h"
#include "common/db.h"
#include "common/json.h"
#include "domain/events.h"
#include "eventstore/event_store.h"
#include "eventstore/migrator.h"

namespace {

using scribe::bench::Clock;
namespace eventstore = scribe::eventstore;

struct WriterResult {
  std::vector<double> latencies_ms;  // measured appends only
  int64_t appends = 0;
  int64_t conflicts = 0;
  std::string error;
};

struct Config {
  std::string url;
  std::string run_id;
  std::string path;
  int writers;
  int batch;
  int stream_events;
  double warmup_s;
  double measure_s;
};

void writer(const Config& cfg, const eventstore::EventStore& store, int index, std::atomic<int>& ready,
            std::atomic<bool>& go, const Clock::time_point& measure_from, const Clock::time_point& measure_until,
            WriterResult& out) {
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = scribe::db::open_connection(cfg.url);
  } catch (const std::exception& e) {
    out.error = e.what();
    ready.fetch_add(1);
    return;
  }
  ready.fetch_add(1);
  while (!go.load()) std::this_thread::yield();

  const std::string prefix = "bench-" + cfg.run_id + "-" + cfg.path + "-n" + std::to_string(cfg.writers) + "-b" +
                             std::to_string(cfg.batch) + "-w" + std::to_string(index) + "-s";
  int stream_no = 0;
  int64_t version = 0;
  int64_t seq = 0;
  out.latencies_ms.reserve(1 << 16);
  try {
    for (;;) {
      auto t0 = Clock::now();
      if (t0 >= measure_until) break;
      if (version + cfg.batch > cfg.stream_events) {
        ++stream_no;
        version = 0;
      }
      std::vector<eventstore::NewEvent> events;
      events.reserve(static_cast<std::size_t>(cfg.batch));
      for (int i = 0; i < cfg.batch; ++i) {
        eventstore::NewEvent e;
        e.type = scribe::events::kWalletDeposited;
        e.data = {{"account_id", 1000000 + index},
                  {"amount_micros", 1'000'000},
                  {"reference", "bench-" + std::to_string(seq++)}};
        e.metadata = {{"principal", "bench"}};
        events.push_back(std::move(e));
      }
      try {
        if (cfg.path == "grouped") {
          store.append_and_commit(*conn, {{prefix + std::to_string(stream_no),
                                           eventstore::ExpectedVersion::exact(version), std::move(events)}});
        } else {
          pqxx::work txn(*conn);
          store.append(txn, prefix + std::to_string(stream_no), eventstore::ExpectedVersion::exact(version),
                       std::move(events));
          scribe::eventstore::EventStore::commit(txn);
        }
      } catch (const eventstore::ConcurrencyError&) {
        ++out.conflicts;  // cannot happen (own streams); counted to prove it
        continue;
      }
      auto t1 = Clock::now();
      version += cfg.batch;
      if (t0 >= measure_from && t1 <= measure_until) {
        ++out.appends;
        out.latencies_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
}

struct Row {
  int writers, batch;
  double seconds, appends_per_s, events_per_s, p50, p99, max;
  int64_t appends, conflicts;
};

Row run_config(const Config& cfg, const eventstore::EventStore& store) {
  std::vector<WriterResult> results(static_cast<std::size_t>(cfg.writers));
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point measure_from, measure_until;
  for (int i = 0; i < cfg.writers; ++i)
    threads.emplace_back(writer, std::cref(cfg), std::cref(store), i, std::ref(ready), std::ref(go),
                         std::cref(measure_from), std::cref(measure_until),
                         std::ref(results[static_cast<std::size_t>(i)]));
  while (ready.load() < cfg.writers) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto start = Clock::now();
  measure_from = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg.warmup_s));
  measure_until =
      measure_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg.measure_s));
  go.store(true);
  for (auto& t : threads) t.join();

  std::vector<double> all;
  Row row{cfg.writers, cfg.batch, cfg.measure_s, 0, 0, 0, 0, 0, 0, 0};
  for (auto& r : results) {
    if (!r.error.empty()) throw std::runtime_error("writer failed: " + r.error);
    row.appends += r.appends;
    row.conflicts += r.conflicts;
    all.insert(all.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  }
  std::sort(all.begin(), all.end());
  row.appends_per_s = static_cast<double>(row.appends) / cfg.measure_s;
  row.events_per_s = row.appends_per_s * cfg.batch;
  row.p50 = scribe::bench::percentile(all, 0.50);
  row.p99 = scribe::bench::percentile(all, 0.99);
  row.max = all.empty() ? 0 : all.back();
  return row;
}

}  // namespace

int main() {
  scribe::bench::machine_info();
  try {
    const std::string url = scribe::bench::require_env("SCRIBE_BENCH_DATABASE_URL");
    const double measure_s = scribe::bench::env_double("SCRIBE_BENCH_SECONDS", 5);
    const double warmup_s = scribe::bench::env_double("SCRIBE_BENCH_WARMUP_SECONDS", 1);
    const auto writer_counts = scribe::bench::env_int_list("SCRIBE_BENCH_WRITERS", "1,8,32");
    const auto batches = scribe::bench::env_int_list("SCRIBE_BENCH_BATCHES", "1,100");
    const int stream_events = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_STREAM_EVENTS", 1000));
    const std::string label = scribe::bench::env_or("SCRIBE_BENCH_LABEL", "");
    const int leaders = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_GROUP_LEADERS", 0));
    if (leaders > 0) eventstore::EventStore::set_group_commit_leaders(leaders);
    const auto store = eventstore::EventStore::without_inline_projections();
    {
      auto conn = scribe::db::open_connection(url, false);
      scribe::eventstore::migrate(*conn);
    }
    const std::string run_id = std::to_string(getpid()) + "-" +
                               std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);

    std::cout << "event append benchmark: " << measure_s << " s per configuration (+" << warmup_s
              << " s warm-up), exact expected version, one connection per writer, notify after commit\n\n";
    std::cout << std::left << std::setw(13) << "path" << std::setw(9) << "writers" << std::setw(15) << "events/append"
              << std::right << std::setw(12) << "appends/s" << std::setw(12) << "events/s" << std::setw(10) << "p50 ms"
              << std::setw(10) << "p99 ms" << std::setw(10) << "max ms" << std::setw(14) << "appends/txn"
              << "\n";
    std::vector<std::string> json_lines;
    std::vector<std::tuple<std::string, int, int>> configs;  // path, events per append, writers
    for (const std::string& path : scribe::bench::env_list("SCRIBE_BENCH_APPEND_PATHS", "grouped,transaction"))
      for (int batch : batches)
        for (int writers : writer_counts) configs.emplace_back(path, batch, writers);
    for (const auto& [path, batch, writers] : configs) {
      Config cfg{url, run_id, path, writers, batch, std::max(stream_events, batch), warmup_s, measure_s};
      auto before = eventstore::EventStore::group_commit_stats();
      Row r = run_config(cfg, store);
      auto after = eventstore::EventStore::group_commit_stats();
      // Units per transaction over the whole configuration (warm-up too).
      const double per_txn =
          path == "grouped" && after.batches > before.batches
              ? static_cast<double>(after.units - before.units) / static_cast<double>(after.batches - before.batches)
              : 1.0;
      std::cout << std::left << std::setw(13) << path << std::setw(9) << r.writers << std::setw(15) << r.batch
                << std::right << std::fixed << std::setprecision(0) << std::setw(12) << r.appends_per_s << std::setw(12)
                << r.events_per_s << std::setprecision(2) << std::setw(10) << r.p50 << std::setw(10) << r.p99
                << std::setw(10) << r.max << std::setw(14) << per_txn << std::endl;
      scribe::Json j = {{"bench", "event_append"},
                        {"label", label},
                        {"notify", "after_commit"},
                        {"path", path},
                        {"appends_per_transaction", per_txn},
                        {"writers", r.writers},
                        {"events_per_append", r.batch},
                        {"seconds", r.seconds},
                        {"appends", r.appends},
                        {"appends_per_s", r.appends_per_s},
                        {"events_per_s", r.events_per_s},
                        {"p50_ms", r.p50},
                        {"p99_ms", r.p99},
                        {"max_ms", r.max},
                        {"conflicts", r.conflicts}};
      json_lines.push_back(j.dump());
    }
    std::cout << "\n";
    for (const auto& l : json_lines) std::cout << l << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "event_append_benchmark: " << e.what() << "\n";
    return 1;
  }
}
