// Group commit against a real PostgreSQL: concurrent commands' appends share
// one transaction, each unit keeps its own expected-version check, a unit that
// breaks the batch is written again alone, and the global order still agrees
// with every stream's version order.
//
// A batch of known composition is made by holding one stream's append lock
// from another connection: the only leader allowed blocks on it inside its
// batch, the next appends queue behind it, and releasing the lock lets one
// leader take the whole queue at once.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "eventstore/event_store.h"
#include "tests/pg_fixture.h"

namespace scribe::eventstore {
namespace {

class GroupCommitTest : public testing::PgTest {
 protected:
  void TearDown() override { EventStore::set_group_commit_leaders(EventStore::kGroupCommitLeaders); }
};

// The log alone: these tests append event types no projection knows. Appends
// share a transaction only through one store, so every appender of a test
// uses the same one.
const EventStore& unprojected() {
  static const EventStore store = EventStore::without_inline_projections();
  return store;
}

NewEvent ev(const std::string& type, int n) { return NewEvent{type, Json{{"n", n}}, Json{{"principal", "test"}}}; }

std::vector<RecordedEvent> read_stream(pqxx::connection& conn, const std::string& stream) {
  pqxx::read_transaction txn(conn);
  return EventStore::read_stream(txn, stream);
}

void wait_until(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(done()) << "timed out waiting";
}

// One append on a thread of its own with a connection of its own; the
// outcome is kept for the test to inspect after join().
struct Appender {
  std::vector<RecordedEvent> recorded;
  std::string error;  // "conflict", another exception's text, or empty
  std::thread thread;

  void start(const EventStore& store, std::vector<StreamAppend> unit) {
    thread = std::thread([this, &store, unit = std::move(unit)]() mutable {
      try {
        auto conn = testing::PgTest::connect();
        recorded = store.append_and_commit(*conn, std::move(unit));
      } catch (const ConcurrencyError&) {
        error = "conflict";
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
  }
};

// Holds `stream`'s append lock in an open transaction until release().
class StreamBlocker {
 public:
  explicit StreamBlocker(const std::string& stream) : conn_(testing::PgTest::connect()), txn_(*conn_) {
    EventStore::lock_stream(txn_, stream);
  }
  void release() { txn_.commit(); }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  pqxx::work txn_;
};

int64_t waiting_lock_requests(pqxx::connection& conn) {
  pqxx::nontransaction txn(conn);
  return txn.exec1("select count(*) from pg_locks where locktype = 'advisory' and not granted")[0].as<int64_t>();
}

// Starts `first` as the lone leader, blocked on `blocked`'s lock, queues each
// of `queued` behind it in order, then releases the lock: the queued units
// become one batch. Everyone appends through `store`.
void run_blocked_batch(const EventStore& store, const std::string& blocked, Appender& first,
                       std::vector<StreamAppend> first_unit,
                       std::vector<std::pair<Appender*, std::vector<StreamAppend>>> queued) {
  EventStore::set_group_commit_leaders(1);
  auto probe = testing::PgTest::connect();
  const int64_t waiting_before = waiting_lock_requests(*probe);
  StreamBlocker blocker(blocked);
  first.start(store, std::move(first_unit));
  wait_until([&] { return waiting_lock_requests(*probe) > waiting_before; });
  const uint64_t queued_before = EventStore::group_commit_stats().queued;
  uint64_t n = 0;
  for (auto& [appender, unit] : queued) {
    appender->start(store, std::move(unit));
    ++n;
    wait_until([&] { return EventStore::group_commit_stats().queued >= queued_before + n; });
  }
  blocker.release();
  first.thread.join();
  for (auto& [appender, unit] : queued) appender->thread.join();
}

TEST_F(GroupCommitTest, QueuedUnitsShareOneTransactionAndAConflictFailsOnlyItsUnit) {
  auto conn = connect();
  const std::string x = unique("gc-x"), y = unique("gc-y"), z = unique("gc-z"), w = unique("gc-w");
  Appender a, b, c, d, e;
  const auto before = EventStore::group_commit_stats();
  run_blocked_batch(unprojected(), x, a, {{x, ExpectedVersion::no_stream(), {ev("A", 0)}}},
                    {{&b, {{y, ExpectedVersion::no_stream(), {ev("B", 1)}}}},
                     // z has no events: expecting version 5 must fail, alone.
                     {&c, {{z, ExpectedVersion::exact(5), {ev("C", 2)}}}},
                     {&d, {{w, ExpectedVersion::no_stream(), {ev("D", 3), ev("D", 4)}}}},
                     // Sees b's append in the same transaction.
                     {&e, {{y, ExpectedVersion::exact(1), {ev("E", 5)}}}}});
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(c.error, "conflict");
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(e.error, "");
  const auto after = EventStore::group_commit_stats();
  EXPECT_EQ(after.batches - before.batches, 2u);  // a's, then b..e's
  EXPECT_EQ(after.units - before.units, 5u);
  EXPECT_GE(after.largest, 4u);

  ASSERT_EQ(b.recorded.size(), 1u);
  ASSERT_EQ(d.recorded.size(), 2u);
  ASSERT_EQ(e.recorded.size(), 1u);
  EXPECT_EQ(b.recorded[0].version, 1);
  EXPECT_EQ(e.recorded[0].version, 2);
  EXPECT_EQ(d.recorded[1].version, 2);
  // One transaction: one tx, positions in queue order.
  EXPECT_EQ(b.recorded[0].global.tx, d.recorded[0].global.tx);
  EXPECT_EQ(b.recorded[0].global.tx, e.recorded[0].global.tx);
  EXPECT_LT(b.recorded[0].global.position, d.recorded[0].global.position);
  EXPECT_LT(d.recorded[1].global.position, e.recorded[0].global.position);
  EXPECT_LT(a.recorded.at(0).global.tx, b.recorded[0].global.tx);

  // What the callers were told is what the log holds.
  auto ys = read_stream(*conn, y);
  ASSERT_EQ(ys.size(), 2u);
  EXPECT_EQ(ys[0].type, "B");
  EXPECT_EQ(ys[1].type, "E");
  EXPECT_EQ(ys[1].global, e.recorded[0].global);
  EXPECT_TRUE(read_stream(*conn, z).empty());
  EXPECT_EQ(read_stream(*conn, w).size(), 2u);
}

// An inline projector that refuses events of type Poison.
class PoisonedProjector final : public InlineProjector {
 public:
  void project(pqxx::work&, const std::vector<RecordedEvent>& events) const override {
    for (const auto& e : events)
      if (e.type == "Poison") throw std::runtime_error("poisoned projection");
  }
};

TEST_F(GroupCommitTest, AUnitThatBreaksItsBatchIsWrittenAloneAndTheOthersStillCommit) {
  // The store's inline projector runs in the shared transaction; one that
  // throws on one unit's events would roll back everyone's.
  const EventStore poisoned(std::make_shared<PoisonedProjector>());
  auto conn = connect();
  const std::string x = unique("gc-x"), p = unique("gc-p"), q = unique("gc-q"), r = unique("gc-r");
  Appender a, good1, bad, good2;
  const auto before = EventStore::group_commit_stats();
  run_blocked_batch(poisoned, x, a, {{x, ExpectedVersion::no_stream(), {ev("A", 0)}}},
                    {{&good1, {{p, ExpectedVersion::no_stream(), {ev("Good", 1)}}}},
                     {&bad, {{q, ExpectedVersion::no_stream(), {ev("Poison", 2)}}}},
                     {&good2, {{r, ExpectedVersion::any(), {ev("Good", 3)}}}}});
  EXPECT_EQ(good1.error, "");
  EXPECT_EQ(good2.error, "");
  EXPECT_EQ(bad.error, "poisoned projection");
  EXPECT_EQ(EventStore::group_commit_stats().isolated - before.isolated, 3u);
  EXPECT_EQ(read_stream(*conn, p).size(), 1u);
  EXPECT_TRUE(read_stream(*conn, q).empty());
  EXPECT_EQ(read_stream(*conn, r).size(), 1u);
  // Written once each, though the failed batch had drawn positions for them.
  EXPECT_EQ(good1.recorded.at(0).version, 1);
  EXPECT_NE(good1.recorded.at(0).global.tx, good2.recorded.at(0).global.tx);
}

TEST_F(GroupCommitTest, AMultiStreamUnitIsAllOrNothingInsideTheBatch) {
  auto conn = connect();
  const std::string x = unique("gc-x"), s1 = unique("gc-s1"), s2 = unique("gc-s2");
  Appender a, both, broken;
  run_blocked_batch(
      unprojected(), x, a, {{x, ExpectedVersion::no_stream(), {ev("A", 0)}}},
      {{&both, {{s1, ExpectedVersion::no_stream(), {ev("S1", 1)}}, {s2, ExpectedVersion::no_stream(), {ev("S2", 1)}}}},
       // s1 is fine for this unit on its own, s2 is not: neither is written.
       {&broken, {{s1, ExpectedVersion::exact(1), {ev("S1", 2)}}, {s2, ExpectedVersion::exact(7), {ev("S2", 2)}}}}});
  EXPECT_EQ(both.error, "");
  EXPECT_EQ(broken.error, "conflict");
  EXPECT_EQ(read_stream(*conn, s1).size(), 1u);
  EXPECT_EQ(read_stream(*conn, s2).size(), 1u);
}

TEST_F(GroupCommitTest, ConcurrentWritersGetGaplessVersionsInGlobalOrder) {
  // 16 writers, 40 appends each, on 4 streams each and on one stream they all
  // share (appended with any(), so it takes every writer's turn).
  constexpr int kWriters = 16, kAppends = 40;
  const std::string prefix = unique("gc-many");
  const std::string shared = prefix + "-shared";
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      try {
        auto conn = connect();
        std::map<std::string, int64_t> versions;
        for (int i = 0; i < kAppends; ++i) {
          const std::string own = prefix + "-w" + std::to_string(w) + "-" + std::to_string(i % 4);
          unprojected().append_and_commit(*conn, {{own, ExpectedVersion::exact(versions[own]), {ev("Own", i)}},
                                                  {shared, ExpectedVersion::any(), {ev("Shared", i)}}});
          ++versions[own];
        }
      } catch (const std::exception&) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0);

  auto conn = connect();
  auto all = read_stream(*conn, shared);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kWriters * kAppends));
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].version, static_cast<int64_t>(i + 1));
    // Version order is global order, also between events of one transaction.
    if (i > 0) {
      EXPECT_LT(all[i - 1].global, all[i].global);
    }
  }
  for (int w = 0; w < kWriters; ++w)
    for (int s = 0; s < 4; ++s) {
      auto own = read_stream(*conn, prefix + "-w" + std::to_string(w) + "-" + std::to_string(s));
      ASSERT_EQ(own.size(), static_cast<std::size_t>(kAppends / 4));
      for (std::size_t i = 0; i < own.size(); ++i) EXPECT_EQ(own[i].version, static_cast<int64_t>(i + 1));
    }
}

TEST_F(GroupCommitTest, SigkillWhileBatchesCommitLeavesEveryUnitWholeOrAbsent) {
  // A child process runs 16 writers, each appending units of two streams (the
  // shape of a settlement: the transcription's outcome and the account's
  // settle) until it is killed with SIGKILL mid-flight. Every unit must then
  // be in the log whole, in one transaction, or not at all, and every stream's
  // versions must run without a gap.
  constexpr int kWriters = 16;
  const std::string prefix = unique("gc-kill");
  const auto stream = [&](char side, int w) { return prefix + "-" + side + std::to_string(w); };
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<std::thread> threads;
    for (int w = 0; w < kWriters; ++w)
      threads.emplace_back([&, w] {
        try {
          auto conn = connect();
          for (int64_t v = 0; v < 100000; ++v)
            unprojected().append_and_commit(*conn,
                                            {{stream('a', w), ExpectedVersion::exact(v), {ev("Outcome", int(v))}},
                                             {stream('b', w), ExpectedVersion::exact(v), {ev("Settled", int(v))}}});
        } catch (...) {
          ::_exit(3);
        }
      });
    for (auto& t : threads) t.join();
    ::_exit(0);
  }

  auto conn = connect();
  const auto count = [&] {
    pqxx::nontransaction txn(*conn);
    return txn.exec_params1("select count(*) from events where stream_id like $1", prefix + "-%")[0].as<int64_t>();
  };
  for (int i = 0; i < 3000 && count() < 2000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writers stopped on their own (status " << status << ")";
  ASSERT_GE(count(), 2000);

  std::set<uint64_t> shared_txs;
  std::map<uint64_t, std::set<int>> writers_of_tx;
  // A backend of the killed child may still commit a unit it had received
  // whole before the kill, between two reads. One snapshot for every read
  // sees each unit entirely or not at all, as the log's readers do.
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> snapshot(*conn);
  for (int w = 0; w < kWriters; ++w) {
    auto a = EventStore::read_stream(snapshot, stream('a', w));
    auto b = EventStore::read_stream(snapshot, stream('b', w));
    ASSERT_EQ(a.size(), b.size()) << "writer " << w << ": a unit was cut in two";
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].version, int64_t(i + 1));
      EXPECT_EQ(b[i].version, int64_t(i + 1));
      EXPECT_EQ(a[i].data.at("n"), b[i].data.at("n"));
      EXPECT_EQ(a[i].global.tx, b[i].global.tx) << "a unit spans two transactions";
      writers_of_tx[a[i].global.tx].insert(w);
    }
  }
  // The kill fell on grouped transactions: some carried several writers' units.
  std::size_t grouped = 0;
  for (const auto& [tx, writers] : writers_of_tx) grouped += writers.size() > 1;
  EXPECT_GT(grouped, 0u);
}

}  // namespace
}  // namespace scribe::eventstore
