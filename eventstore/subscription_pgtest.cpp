// eventstore::Subscription against a real PostgreSQL: catch-up, then live delivery via
// LISTEN/NOTIFY, every event exactly once and in global order, even when a
// transaction that drew an earlier position commits last.
#include "eventstore/subscription.h"

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "eventstore/event_store.h"
#include "tests/pg_fixture.h"

namespace scribe::eventstore {
namespace {

class SubscriptionTest : public testing::PgTest {};

// The log alone: these tests append event types no projection knows, through
// a store that runs none.
const EventStore& unprojected() {
  static const EventStore store = EventStore::without_inline_projections();
  return store;
}

using namespace std::chrono_literals;

NewEvent ev(const std::string& type, int n) { return NewEvent{type, Json{{"n", n}}}; }

std::vector<RecordedEvent> append_committed(pqxx::connection& conn, const std::string& stream,
                                            std::vector<NewEvent> events) {
  pqxx::work txn(conn);
  auto out = unprojected().append(txn, stream, ExpectedVersion::any(), std::move(events));
  txn.commit();
  return out;
}

// The newest event a reader may be given now (what a fully caught-up
// subscriber's checkpoint would be), without reading the whole log.
GlobalPosition head_of(pqxx::connection& conn) {
  pqxx::read_transaction txn(conn);
  auto r = txn.exec(
      "select tx::text, position from events e where e.tx < pg_snapshot_xmin(pg_current_snapshot()) "
      "order by e.tx desc, e.position desc limit 1");
  if (r.empty()) return {};
  GlobalPosition from{std::stoull(r[0][0].c_str()), r[0][1].as<int64_t>()};
  // Nothing readable lies beyond it.
  if (!EventStore::read_all(txn, from, 1).empty()) throw std::runtime_error("head_of: events beyond the head");
  return from;
}

// Collects what a subscription delivers, from its thread.
class Collector {
 public:
  void add(const RecordedEvent& e) {
    std::lock_guard lock(mu_);
    all_.push_back(e);
  }
  std::vector<RecordedEvent> with_prefix(const std::string& prefix) const {
    std::lock_guard lock(mu_);
    std::vector<RecordedEvent> out;
    for (const auto& e : all_)
      if (e.stream_id.rfind(prefix, 0) == 0) out.push_back(e);
    return out;
  }
  std::vector<RecordedEvent> all() const {
    std::lock_guard lock(mu_);
    return all_;
  }
  // Polls (bounded) until `n` events with the prefix have arrived.
  bool wait_for(const std::string& prefix, std::size_t n, std::chrono::milliseconds limit = 10s) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (with_prefix(prefix).size() >= n) return true;
      std::this_thread::sleep_for(10ms);
    }
    return with_prefix(prefix).size() >= n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<RecordedEvent> all_;
};

void expect_strictly_increasing(const std::vector<RecordedEvent>& events) {
  for (std::size_t i = 1; i < events.size(); ++i)
    EXPECT_LT(events[i - 1].global, events[i].global)
        << "event " << i << " (" << events[i].stream_id << " v" << events[i].version << ") out of order";
}

TEST_F(SubscriptionTest, CatchesUpThenDeliversLiveEventsInOrder) {
  auto conn = connect();
  const std::string prefix = unique("sub-live");
  GlobalPosition from = head_of(*conn);

  // Before the subscription starts: 7 events to catch up with, in small batches.
  std::vector<RecordedEvent> expected;
  for (int i = 0; i < 3; ++i) {
    auto r = append_committed(*conn, prefix + "-" + std::to_string(i % 2), {ev("Old", i), ev("Old", i + 100)});
    expected.insert(expected.end(), r.begin(), r.end());
  }
  auto r = append_committed(*conn, prefix + "-2", {ev("Old", 7)});
  expected.insert(expected.end(), r.begin(), r.end());

  Collector got;
  Subscription sub(
      testing::database_url(), from, [&](const RecordedEvent& e) { got.add(e); }, 2);
  sub.start();
  ASSERT_TRUE(got.wait_for(prefix, 7)) << "caught up with " << got.with_prefix(prefix).size() << " of 7";

  // Live: each append is delivered after its commit.
  for (int i = 0; i < 5; ++i) {
    auto live = append_committed(*conn, prefix + "-live", {ev("New", i)});
    expected.insert(expected.end(), live.begin(), live.end());
    ASSERT_TRUE(got.wait_for(prefix, expected.size())) << "live event " << i << " not delivered";
  }
  std::this_thread::sleep_for(300ms);  // a duplicate would arrive within one poll period
  sub.stop();

  auto mine = got.with_prefix(prefix);
  ASSERT_EQ(mine.size(), expected.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].global, expected[i].global) << i;
    EXPECT_EQ(mine[i].stream_id, expected[i].stream_id) << i;
    EXPECT_EQ(mine[i].version, expected[i].version) << i;
    EXPECT_EQ(mine[i].data, expected[i].data) << i;
  }
  expect_strictly_increasing(got.all());
  EXPECT_EQ(sub.position(), expected.back().global);
}

TEST_F(SubscriptionTest, LateCommitterIsDeliveredFirstAndNothingIsSkipped) {
  auto c_a = connect();
  auto c_other = connect();
  const std::string prefix = unique("sub-xmin");
  GlobalPosition from = head_of(*c_other);

  Collector got;
  Subscription sub(
      testing::database_url(), from, [&](const RecordedEvent& e) { got.add(e); }, 3);
  sub.start();

  // A takes the earliest position and stays open.
  pqxx::work txn_a(*c_a);
  auto a = unprojected().append(txn_a, prefix + "-a", ExpectedVersion::no_stream(), {ev("A", 0), ev("A", 1)});

  // Later transactions commit first; their NOTIFYs wake the subscription.
  std::vector<RecordedEvent> later;
  for (int i = 0; i < 6; ++i) {
    auto r = append_committed(*c_other, prefix + "-b" + std::to_string(i % 3), {ev("B", i)});
    later.insert(later.end(), r.begin(), r.end());
  }
  ASSERT_GT(later.front().global.position, a.back().global.position);

  // Give the subscription several wake-ups and polls: none of these may come
  // through while A, which sorts before them, can still commit.
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(got.with_prefix(prefix).empty())
      << "delivered " << got.with_prefix(prefix).size() << " events past a transaction that had not committed";

  txn_a.commit();
  ASSERT_TRUE(got.wait_for(prefix, a.size() + later.size()))
      << "only " << got.with_prefix(prefix).size() << " of " << a.size() + later.size() << " delivered";
  std::this_thread::sleep_for(300ms);  // room for a duplicate to show up
  sub.stop();

  auto mine = got.with_prefix(prefix);
  ASSERT_EQ(mine.size(), a.size() + later.size());
  std::vector<RecordedEvent> expected = a;
  expected.insert(expected.end(), later.begin(), later.end());
  std::set<int64_t> positions;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].global, expected[i].global) << i;
    EXPECT_EQ(mine[i].stream_id, expected[i].stream_id) << i;
    EXPECT_EQ(mine[i].data, expected[i].data) << i;
    positions.insert(mine[i].global.position);
  }
  EXPECT_EQ(positions.size(), mine.size()) << "an event was delivered twice";
  expect_strictly_increasing(got.all());
}

}  // namespace
}  // namespace scribe::eventstore
