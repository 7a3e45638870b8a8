// Group commit: concurrent commands share one appending transaction.
//
// An append that commits on its own pays for a whole transaction: BEGIN, the
// append, COMMIT and a WAL flush, three round trips for one row. With many
// writers that overhead, not the row, is what limits throughput
// (bench/README.md). Here the appends of concurrent callers wait in a queue
// and a leader, one of the callers, writes everything queued with
// scribe_append_batch (migrations/052_append_batch.sql) in one transaction on
// its own connection, commits it, and hands each caller its result. While a
// leader is busy the next appends queue up, so batches grow with the load and
// a lone caller is its own leader at once, paying nothing extra.
//
// Each caller's appends are a unit, checked and written all or nothing inside
// the batch: a unit whose expected version does not hold gets a
// ConcurrencyError and the others are written. If the batch fails for another
// reason (an inline projection throws on one unit's events, say) before its
// commit, it is rolled back and every unit is written again alone, so the
// fault stays with its unit. A failure during COMMIT is not retried: the
// batch may have committed, so every caller gets that error, as a caller
// committing alone would.
//
// The queues belong to an EventStore instance (and its copies), so a batch
// only carries appends that run the same inline projector: its leader runs
// that projector once on every unit's events.
//
// The global-order argument of event_store.cpp holds unchanged: the batch
// takes every stream's advisory lock, sorted, before its transaction has an
// id, and all of its events carry that one id.
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "common/db.h"
#include "common/sql_time.h"
#include "eventstore/event_store.h"

namespace scribe::eventstore {
namespace {

const db::Statement kAppendBatch{
    "events.append_batch",
    "select unit, ok, version, position, tx::text, " SCRIBE_SQL_ISO_US(
        "recorded_at") " from scribe_append_batch($1::int[], $2::text[], $3::bigint[], $4::text[])"};

// At most this many units in one transaction, so one batch's latency stays
// bounded and a failed batch is retried alone in bounded time.
constexpr std::size_t kMaxUnits = 64;

// Leaders in flight per database. With 32 single-event writers two or three
// measured best (bench/README.md): one leaves the database idle while its
// batch commits, more make batches small again. With 8 writers more is
// better (the cores are not yet busy), so three, not two.
std::atomic<int> leaders_allowed{EventStore::kGroupCommitLeaders};

// A unit with this many events or more commits alone at once: its own work
// outweighs a transaction's overhead, and waiting for a leader only adds
// latency (100-event appends measured slower grouped than alone).
constexpr std::size_t kAloneFromEvents = 16;

std::size_t event_count(const std::vector<StreamAppend>& unit) {
  std::size_t n = 0;
  for (const auto& a : unit) n += a.events.size();
  return n;
}

// A PostgreSQL array literal of strings: every element quoted, with
// backslash and double quote escaped (libpqxx 6 converts no containers).
void append_quoted(std::string& out, const std::string& s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

// The queue of one database's appends through one store and the leaders
// writing it. `store` is the caller's: every caller of one committer appends
// through the same store or a copy of it (GroupCommitQueues), so any of them
// may lead for all.
class GroupCommitter {
 public:
  static GroupCommitStats stats() {
    std::lock_guard lock(stats_mu_);
    return stats_;
  }

  std::vector<RecordedEvent> append(const EventStore& store, pqxx::connection& conn, std::vector<StreamAppend> unit) {
    Request req;
    req.unit = std::move(unit);
    std::unique_lock lock(mu_);
    queue_.push_back(&req);
    queued(+1);
    for (;;) {
      if (req.done) break;
      if (req.queued && leaders_ < leaders_allowed.load()) {
        lead(store, conn, lock);
        continue;
      }
      req.cv.wait(lock);
    }
    if (req.error) std::rethrow_exception(req.error);
    return std::move(req.recorded);
  }

 private:
  struct Request {
    std::vector<StreamAppend> unit;
    std::vector<RecordedEvent> recorded;
    std::exception_ptr error;
    bool queued = true;  // still waiting for a leader to take it
    bool done = false;
    std::condition_variable cv;
  };

  // Takes the front of the queue, writes it with `conn` outside the lock,
  // then wakes its callers and the owner of the next queued request.
  void lead(const EventStore& store, pqxx::connection& conn, std::unique_lock<std::mutex>& lock) {
    std::vector<Request*> batch;
    while (!queue_.empty() && batch.size() < kMaxUnits) {
      batch.push_back(queue_.front());
      batch.back()->queued = false;
      queue_.pop_front();
    }
    queued(-static_cast<int64_t>(batch.size()));
    ++leaders_;
    lock.unlock();
    write(store, conn, batch);
    lock.lock();
    --leaders_;
    for (Request* r : batch) {
      r->done = true;
      r->cv.notify_one();
    }
    if (!queue_.empty()) queue_.front()->cv.notify_one();
  }

  // Fills every request's result or error; never throws.
  static void write(const EventStore& store, pqxx::connection& conn, const std::vector<Request*>& batch) {
    std::vector<const std::vector<StreamAppend>*> units;
    for (Request* r : batch) units.push_back(&r->unit);
    std::vector<bool> conflicted;
    bool committing = false;
    try {
      pqxx::work txn(conn);
      std::vector<std::vector<RecordedEvent>> recorded;
      if (batch.size() == 1) {
        // A lone unit (no one else was waiting) takes the leaner append
        // functions: for one stream, scribe_append_stream costs less than the
        // batch function's set-up. Its conflict throws and fails only it.
        recorded.push_back(store.append(txn, batch.front()->unit));
        conflicted.assign(1, false);
      } else {
        recorded = store.append_units(txn, units, conflicted);
      }
      committing = true;
      EventStore::commit(txn);
      for (std::size_t u = 0; u < batch.size(); ++u) {
        if (conflicted[u])
          batch[u]->error = std::make_exception_ptr(ConcurrencyError(conflict_message(batch[u]->unit)));
        else batch[u]->recorded = std::move(recorded[u]);
      }
      count(batch.size(), 0);
      return;
    } catch (...) {
      if (committing || batch.size() == 1) {
        for (Request* r : batch) r->error = std::current_exception();
        count(batch.size(), 0);
        return;
      }
    }
    // The batch failed before its commit and wrote nothing: each unit alone.
    for (Request* r : batch) write(store, conn, {r});
    count(0, batch.size());
  }

  static std::string conflict_message(const std::vector<StreamAppend>& unit) {
    std::string streams;
    for (const auto& a : unit) streams += (streams.empty() ? "" : ", ") + a.stream_id;
    return "a stream is not at its expected version (" + streams + ")";
  }

  static void queued(int64_t delta) {
    std::lock_guard lock(stats_mu_);
    stats_.queued = static_cast<uint64_t>(static_cast<int64_t>(stats_.queued) + delta);
  }

  static void count(std::size_t units, std::size_t isolated) {
    std::lock_guard lock(stats_mu_);
    if (units) {
      ++stats_.batches;
      stats_.units += units;
      stats_.largest = std::max<uint64_t>(stats_.largest, units);
    }
    stats_.isolated += isolated;
  }

  std::mutex mu_;
  std::deque<Request*> queue_;
  int leaders_ = 0;
  static inline std::mutex stats_mu_;
  static inline GroupCommitStats stats_;
};

// One store's committers, one per database URL, made on first use and kept
// for the store's lifetime (shared by its copies).
class GroupCommitQueues {
 public:
  GroupCommitter& for_database(const std::string& url) {
    std::lock_guard lock(mu_);
    auto& c = committers_[url];
    if (!c) c = std::make_unique<GroupCommitter>();
    return *c;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<GroupCommitter>> committers_;
};

std::shared_ptr<GroupCommitQueues> EventStore::new_group_commit_queues() {
  return std::make_shared<GroupCommitQueues>();
}

std::vector<RecordedEvent> EventStore::append_and_commit(pqxx::connection& conn, std::vector<StreamAppend> unit) const {
  if (unit.empty()) return {};
  if (event_count(unit) >= kAloneFromEvents) {
    pqxx::work txn(conn);
    auto recorded = append(txn, unit);
    commit(txn);
    return recorded;
  }
  return queues_->for_database(conn.options()).append(*this, conn, std::move(unit));
}

GroupCommitStats EventStore::group_commit_stats() { return GroupCommitter::stats(); }

void EventStore::set_group_commit_leaders(int leaders) { leaders_allowed.store(std::max(1, leaders)); }

std::vector<std::vector<RecordedEvent>> EventStore::append_units(
    pqxx::work& txn, const std::vector<const std::vector<StreamAppend>*>& units, std::vector<bool>& conflicted) const {
  std::string unit_ids = "{", streams = "{", expected = "{", events = "{";
  bool first = true;
  for (std::size_t u = 0; u < units.size(); ++u)
    for (const auto& a : *units[u]) {
      if (!first) {
        unit_ids += ',';
        streams += ',';
        expected += ',';
        events += ',';
      }
      first = false;
      unit_ids += std::to_string(u);
      append_quoted(streams, a.stream_id);
      expected += std::to_string(a.expected.value);
      append_quoted(events, events_json(a.events));
    }
  pqxx::result res = txn.exec_prepared(kAppendBatch.name, unit_ids + "}", streams + "}", expected + "}", events + "}");

  // First one (unit, false) row per unit that failed its check (it wrote
  // nothing), then one (unit, true, ...) row per event of the other units, in
  // input order.
  conflicted.assign(units.size(), false);
  pqxx::result::size_type row = 0;
  for (; row < res.size() && !res[row][1].as<bool>(); ++row) conflicted.at(res[row][0].as<std::size_t>()) = true;
  // Every event once, in order, for the inline projector; then moved to its unit.
  std::vector<RecordedEvent> all;
  std::vector<std::size_t> unit_of;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (conflicted[u]) continue;
    for (const auto& a : *units[u])
      for (const auto& e : a.events) {
        if (row >= res.size() || res[row][0].as<std::size_t>() != u)
          throw std::logic_error("scribe_append_batch returned rows out of order");
        all.push_back(appended_event(res[row++], 2, a.stream_id, e));
        unit_of.push_back(u);
      }
  }
  all = finish_append(txn, std::move(all));
  std::vector<std::vector<RecordedEvent>> out(units.size());
  for (std::size_t i = 0; i < all.size(); ++i) out[unit_of[i]].push_back(std::move(all[i]));
  return out;
}

}  // namespace scribe::eventstore
