// Integration tests of the event store against a real PostgreSQL: versions and
// expected-version semantics, atomic multi-stream appends, the first-write rule,
// racing appenders, the gap-free global order, and immutability/redaction.
#include "eventstore/event_store.h"

#include <algorithm>
#include <latch>
#include <set>
#include <thread>

#include "tests/pg_fixture.h"

namespace scribe::eventstore {
namespace {

class EventStoreTest : public testing::PgTest {};

// The log alone: these tests append event types no projection knows, through
// a store that runs none.
const EventStore& unprojected() {
  static const EventStore store = EventStore::without_inline_projections();
  return store;
}

NewEvent ev(const std::string& type, int n) { return NewEvent{type, Json{{"n", n}}, Json{{"principal", "test"}}}; }

// Appends in a transaction of its own and commits.
std::vector<RecordedEvent> append_committed(pqxx::connection& conn, const std::string& stream, ExpectedVersion expected,
                                            std::vector<NewEvent> events) {
  pqxx::work txn(conn);
  auto out = unprojected().append(txn, stream, expected, std::move(events));
  txn.commit();
  return out;
}

std::vector<RecordedEvent> read_stream(pqxx::connection& conn, const std::string& stream) {
  pqxx::read_transaction txn(conn);
  return EventStore::read_stream(txn, stream);
}

// Reads everything readable after `from`, advancing `from`.
std::vector<RecordedEvent> drain(pqxx::connection& conn, GlobalPosition& from) {
  std::vector<RecordedEvent> all;
  for (;;) {
    pqxx::read_transaction txn(conn);
    auto batch = EventStore::read_all(txn, from, 1000);
    if (batch.empty()) return all;
    from = batch.back().global;
    for (auto& e : batch) all.push_back(std::move(e));
  }
}

std::string sqlstate_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const pqxx::sql_error& err) {
    return err.sqlstate();
  }
  return "no error";
}

// ---------------------------------------------------------------------------
// Appends and expected versions

TEST_F(EventStoreTest, SingleAndMultiEventAppendsGetConsecutiveVersions) {
  auto conn = connect();
  const std::string s = unique("es-versions");

  auto first = append_committed(*conn, s, ExpectedVersion::no_stream(), {ev("Created", 1)});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].stream_id, s);
  EXPECT_EQ(first[0].version, 1);
  EXPECT_GT(first[0].global.position, 0);
  EXPECT_GT(first[0].global.tx, 0u);
  EXPECT_EQ(first[0].type, "Created");
  EXPECT_EQ(first[0].recorded_at.size(), 27u) << first[0].recorded_at;  // 2026-01-01T00:00:00.000000Z

  auto more =
      append_committed(*conn, s, ExpectedVersion::exact(1), {ev("Changed", 2), ev("Changed", 3), ev("Changed", 4)});
  ASSERT_EQ(more.size(), 3u);
  for (std::size_t i = 0; i < more.size(); ++i) {
    EXPECT_EQ(more[i].version, static_cast<int64_t>(i) + 2);
    EXPECT_EQ(more[i].global.tx, more[0].global.tx) << "one append is one transaction";
    if (i > 0) {
      EXPECT_GT(more[i].global.position, more[i - 1].global.position);
    }
  }
  EXPECT_GT(more[0].global, first[0].global);

  auto stored = read_stream(*conn, s);
  ASSERT_EQ(stored.size(), 4u);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].version, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(stored[i].data, (Json{{"n", static_cast<int>(i) + 1}}));
    EXPECT_EQ(stored[i].metadata, (Json{{"principal", "test"}}));
  }
  EXPECT_EQ(stored[0].type, "Created");
  EXPECT_EQ(stored[3].type, "Changed");
  EXPECT_EQ(stored[0].global, first[0].global);
  EXPECT_EQ(stored[3].global, more[2].global);
  EXPECT_EQ(stored[0].recorded_at, first[0].recorded_at);

  pqxx::read_transaction txn(*conn);
  auto tail = EventStore::read_stream(txn, s, 2);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].version, 3);
  EXPECT_EQ(tail[1].version, 4);
}

TEST_F(EventStoreTest, ExpectedVersionSemantics) {
  auto conn = connect();
  const std::string s = unique("es-expected");

  // any on a new stream starts it; any on an existing one appends.
  EXPECT_EQ(append_committed(*conn, s, ExpectedVersion::any(), {ev("A", 1)}).at(0).version, 1);
  EXPECT_EQ(append_committed(*conn, s, ExpectedVersion::any(), {ev("A", 2)}).at(0).version, 2);

  // no_stream on an existing stream fails.
  EXPECT_THROW(append_committed(*conn, s, ExpectedVersion::no_stream(), {ev("A", 99)}), ConcurrencyError);
  // exact mismatch fails, below and above the current version.
  EXPECT_THROW(append_committed(*conn, s, ExpectedVersion::exact(1), {ev("A", 99)}), ConcurrencyError);
  EXPECT_THROW(append_committed(*conn, s, ExpectedVersion::exact(3), {ev("A", 99)}), ConcurrencyError);
  // exact on a stream that does not exist fails.
  EXPECT_THROW(append_committed(*conn, unique("es-expected-none"), ExpectedVersion::exact(1), {ev("A", 99)}),
               ConcurrencyError);
  // The refused appends left nothing behind.
  ASSERT_EQ(read_stream(*conn, s).size(), 2u);

  // exact match appends.
  auto ok = append_committed(*conn, s, ExpectedVersion::exact(2), {ev("A", 3)});
  EXPECT_EQ(ok.at(0).version, 3);

  auto stored = read_stream(*conn, s);
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[2].data, (Json{{"n", 3}}));
  for (const auto& e : stored) EXPECT_NE(e.data, (Json{{"n", 99}}));
}

TEST_F(EventStoreTest, AppendToSeveralStreamsIsAtomic) {
  auto conn = connect();
  const std::string fresh = unique("es-atomic-fresh");
  const std::string existing = unique("es-atomic-existing");
  append_committed(*conn, existing, ExpectedVersion::no_stream(), {ev("A", 1)});

  // The second stream's expectation is wrong: neither stream may get events.
  {
    pqxx::work txn(*conn);
    std::vector<StreamAppend> appends = {{fresh, ExpectedVersion::no_stream(), {ev("B", 1), ev("B", 2)}},
                                         {existing, ExpectedVersion::exact(7), {ev("A", 2)}}};
    EXPECT_THROW(unprojected().append(txn, appends), ConcurrencyError);
  }
  EXPECT_TRUE(read_stream(*conn, fresh).empty());
  EXPECT_EQ(read_stream(*conn, existing).size(), 1u);

  // Same with the wrong expectation first.
  {
    pqxx::work txn(*conn);
    std::vector<StreamAppend> appends = {{existing, ExpectedVersion::no_stream(), {ev("A", 2)}},
                                         {fresh, ExpectedVersion::no_stream(), {ev("B", 1)}}};
    EXPECT_THROW(unprojected().append(txn, appends), ConcurrencyError);
  }
  EXPECT_TRUE(read_stream(*conn, fresh).empty());
  EXPECT_EQ(read_stream(*conn, existing).size(), 1u);

  // With the right expectations both streams get their events, in one transaction.
  pqxx::work txn(*conn);
  std::vector<StreamAppend> appends = {{fresh, ExpectedVersion::no_stream(), {ev("B", 1), ev("B", 2)}},
                                       {existing, ExpectedVersion::exact(1), {ev("A", 2)}}};
  auto out = unprojected().append(txn, appends);
  txn.commit();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].stream_id, fresh);
  EXPECT_EQ(out[0].version, 1);
  EXPECT_EQ(out[1].stream_id, fresh);
  EXPECT_EQ(out[1].version, 2);
  EXPECT_EQ(out[2].stream_id, existing);
  EXPECT_EQ(out[2].version, 2);
  EXPECT_EQ(out[0].global.tx, out[2].global.tx);
  EXPECT_EQ(read_stream(*conn, fresh).size(), 2u);
  EXPECT_EQ(read_stream(*conn, existing).size(), 2u);
}

TEST_F(EventStoreTest, AppendMustBeTheFirstWriteOfItsTransaction) {
  auto conn = connect();
  const std::string s = unique("es-firstwrite");

  // Something else already gave the transaction an id.
  {
    pqxx::work txn(*conn);
    txn.exec("select pg_current_xact_id()");
    EXPECT_EQ(sqlstate_of([&] { unprojected().append(txn, s, ExpectedVersion::any(), {ev("A", 1)}); }), "SC002");
  }
  {
    pqxx::work txn(*conn);
    txn.exec("select pg_current_xact_id()");
    EXPECT_THROW(unprojected().append(txn, s, ExpectedVersion::any(), {ev("A", 1)}), pqxx::sql_error);
  }
  // A second append in the same transaction is refused too (it is not a ConcurrencyError).
  {
    pqxx::work txn(*conn);
    unprojected().append(txn, s, ExpectedVersion::no_stream(), {ev("A", 1)});
    try {
      unprojected().append(txn, s + "-other", ExpectedVersion::no_stream(), {ev("A", 2)});
      ADD_FAILURE() << "second append in one transaction was accepted";
    } catch (const ConcurrencyError& err) {
      ADD_FAILURE() << "expected SC002, got a ConcurrencyError: " << err.what();
    } catch (const pqxx::sql_error& err) {
      EXPECT_EQ(err.sqlstate(), "SC002");
    }
  }
  EXPECT_TRUE(read_stream(*conn, s).empty());
  EXPECT_TRUE(read_stream(*conn, s + "-other").empty());
}

// ---------------------------------------------------------------------------
// Racing appenders

TEST_F(EventStoreTest, ConcurrentAppendsAtTheSameVersionOneWins) {
  auto setup = connect();
  auto c1 = connect();
  auto c2 = connect();
  constexpr int kRounds = 50;
  for (int round = 0; round < kRounds; ++round) {
    const std::string s = unique("es-race");
    // Even rounds race at version 1; odd rounds race to create the stream.
    const bool create = round % 2 == 1;
    if (!create) append_committed(*setup, s, ExpectedVersion::no_stream(), {ev("Seed", 0)});
    const ExpectedVersion expected = create ? ExpectedVersion::no_stream() : ExpectedVersion::exact(1);

    enum Outcome { kNone, kWon, kConflict, kOther };
    Outcome outcome[2] = {kNone, kNone};
    std::string other_error[2];
    std::latch start(2);
    auto racer = [&](int who, pqxx::connection& conn) {
      start.arrive_and_wait();
      try {
        pqxx::work txn(conn);
        unprojected().append(txn, s, expected, {ev("Raced", who)});
        txn.commit();
        outcome[who] = kWon;
      } catch (const ConcurrencyError&) {
        outcome[who] = kConflict;
      } catch (const std::exception& err) {
        outcome[who] = kOther;
        other_error[who] = err.what();
      }
    };
    std::thread t0(racer, 0, std::ref(*c1));
    std::thread t1(racer, 1, std::ref(*c2));
    t0.join();
    t1.join();

    ASSERT_NE(outcome[0], kOther) << other_error[0];
    ASSERT_NE(outcome[1], kOther) << other_error[1];
    ASSERT_TRUE((outcome[0] == kWon && outcome[1] == kConflict) || (outcome[0] == kConflict && outcome[1] == kWon))
        << "round " << round << ": outcomes " << outcome[0] << " " << outcome[1];
    const int winner = outcome[0] == kWon ? 0 : 1;

    auto stored = read_stream(*setup, s);
    const int64_t raced_version = create ? 1 : 2;
    ASSERT_EQ(stored.size(), static_cast<std::size_t>(raced_version)) << "round " << round;
    EXPECT_EQ(stored.back().version, raced_version);
    EXPECT_EQ(stored.back().type, "Raced");
    EXPECT_EQ(stored.back().data, (Json{{"n", winner}}));
  }
}

// ---------------------------------------------------------------------------
// The global order never skips a late committer

TEST_F(EventStoreTest, ReadAllNeverPassesAnUncommittedAppend) {
  auto c_a = connect();
  auto c_other = connect();
  auto reader = connect();

  // The current checkpoint of a caught-up reader.
  GlobalPosition head;
  {
    pqxx::read_transaction txn(*reader);
    auto r = txn.exec(
        "select tx::text, position from events e where e.tx < pg_snapshot_xmin(pg_current_snapshot()) "
        "order by e.tx desc, e.position desc limit 1");
    if (!r.empty()) head = GlobalPosition{std::stoull(r[0][0].c_str()), r[0][1].as<int64_t>()};
  }
  drain(*reader, head);

  const std::string prefix = unique("es-xmin");
  const std::string sa = prefix + "-a";

  // Transaction A draws its position first and stays open.
  pqxx::work txn_a(*c_a);
  auto a = unprojected().append(txn_a, sa, ExpectedVersion::no_stream(), {ev("A", 0)});
  ASSERT_EQ(a.size(), 1u);

  // Later appends on another connection commit while A is still open.
  std::vector<RecordedEvent> later;
  for (int i = 1; i <= 4; ++i) {
    auto r = append_committed(*c_other, prefix + "-b" + std::to_string(i), ExpectedVersion::no_stream(),
                              {ev("B", i), ev("B", i * 10)});
    for (auto& e : r) later.push_back(std::move(e));
  }
  ASSERT_EQ(later.size(), 8u);
  for (const auto& e : later) {
    EXPECT_GT(e.global.position, a[0].global.position) << "later appends draw larger positions";
    EXPECT_GT(e.global.tx, a[0].global.tx) << "later appends get larger transaction ids";
  }

  // The danger is real: the later events are committed and visible to a plain
  // query, while A's is not; a reader ordering by position would pass A.
  {
    pqxx::read_transaction txn(*reader);
    auto visible =
        txn.exec_params("select count(*) from events where stream_id like $1", prefix + "-%")[0][0].as<int64_t>();
    EXPECT_EQ(visible, 8);
  }

  // read_all holds back everything from A's transaction on.
  GlobalPosition from = head;
  auto early = drain(*reader, from);
  for (const auto& e : early) {
    EXPECT_NE(e.stream_id.rfind(prefix, 0), 0u)
        << "read_all returned " << e.stream_id << " v" << e.version << " while an earlier transaction was still open";
    EXPECT_LT(e.global.tx, a[0].global.tx);
  }

  txn_a.commit();

  auto after = drain(*reader, from);
  std::vector<RecordedEvent> mine;
  for (auto& e : after)
    if (e.stream_id.rfind(prefix, 0) == 0) mine.push_back(std::move(e));
  ASSERT_EQ(mine.size(), 9u);
  EXPECT_EQ(mine[0].stream_id, sa);
  EXPECT_EQ(mine[0].global, a[0].global);
  for (std::size_t i = 0; i < later.size(); ++i) {
    EXPECT_EQ(mine[i + 1].global, later[i].global) << i;
    EXPECT_EQ(mine[i + 1].data, later[i].data) << i;
  }
  for (std::size_t i = 1; i < after.size(); ++i) EXPECT_LT(after[i - 1].global, after[i].global);
}

// The order is numeric in the transaction id: 1000 comes after 999. (An ORDER BY
// that names the text output column `tx` instead of the xid8 column e.tx sorts
// "1000" before "999" and skips events across such a boundary.)
TEST_F(EventStoreTest, GlobalOrderIsNumericAcrossTransactionIdDigitCounts) {
  auto conn = connect();
  const std::string prefix = unique("es-digits");
  auto e1 = append_committed(*conn, prefix + "-1", ExpectedVersion::no_stream(), {ev("A", 1), ev("A", 2)});
  const uint64_t n = e1[0].global.tx;
  uint64_t boundary = 1;
  while (boundary <= n) boundary *= 10;
  // Consume transaction ids up to the next power of ten: each rolled-back
  // subtransaction that writes draws one. About 60,000 ids per second.
  constexpr uint64_t kMaxBurn = 400'000;
  if (boundary - n > kMaxBurn)
    GTEST_SKIP() << "next transaction-id digit boundary " << boundary << " is too far from " << n
                 << "; run on a fresh cluster";
  {
    pqxx::nontransaction txn(*conn);
    txn.exec("create temp table if not exists es_test_burn (x int)");
    for (int round = 0; round < 10; ++round) {
      const uint64_t next = txn.exec("select pg_snapshot_xmax(pg_current_snapshot())::text")[0][0].as<uint64_t>();
      if (next > boundary) break;
      const uint64_t count = std::min<uint64_t>(boundary - next + 10, 100'000);
      txn.exec("do $$ begin for i in 1.." + std::to_string(count) +
               " loop begin insert into es_test_burn values (i); raise exception 'burn'; "
               "exception when others then null; end; end loop; end $$");
    }
  }
  auto e2 = append_committed(*conn, prefix + "-2", ExpectedVersion::no_stream(), {ev("B", 1)});
  ASSERT_GE(e2[0].global.tx, boundary);
  ASSERT_LT(e1[0].global.tx, boundary);

  // Page one event at a time from just before e1: e1's events first, then e2's.
  GlobalPosition from{e1[0].global.tx, e1[0].global.position - 1};
  std::vector<RecordedEvent> mine;
  for (int i = 0; i < 100; ++i) {
    pqxx::read_transaction txn(*conn);
    auto batch = EventStore::read_all(txn, from, 1);
    if (batch.empty()) break;
    EXPECT_GT(batch[0].global, from) << "read_all went backwards";
    from = batch[0].global;
    if (batch[0].stream_id.rfind(prefix, 0) == 0) mine.push_back(batch[0]);
  }
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].global, e1[0].global);
  EXPECT_EQ(mine[1].global, e1[1].global);
  EXPECT_EQ(mine[2].global, e2[0].global);

  // The same in one batch.
  pqxx::read_transaction txn(*conn);
  auto all = EventStore::read_all(txn, GlobalPosition{e1[0].global.tx, e1[0].global.position - 1}, 1000);
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0].global, e1[0].global);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_LT(all[i - 1].global, all[i].global);
}

// ---------------------------------------------------------------------------
// Immutability and the one redaction path

TEST_F(EventStoreTest, EventsCannotBeUpdatedDeletedOrTruncated) {
  auto conn = connect();
  const std::string s = unique("es-immutable");
  append_committed(*conn, s, ExpectedVersion::no_stream(), {ev("A", 1), ev("A", 2)});

  // Each attempt runs in a transaction that is never committed, so a broken
  // guard cannot damage the shared database.
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(
        sqlstate_of([&] { txn.exec_params("update events set data = '{\"n\": 42}'::jsonb where stream_id = $1", s); }),
        "SC003");
  }
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(sqlstate_of([&] { txn.exec_params("delete from events where stream_id = $1", s); }), "SC003");
  }
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(sqlstate_of([&] { txn.exec("truncate events"); }), "SC003");
  }
  // The redaction setting does not open DELETE, nor changes other than data.
  {
    pqxx::work txn(*conn);
    txn.exec("set local scribe.redaction = 'on'");
    EXPECT_EQ(sqlstate_of([&] { txn.exec_params("delete from events where stream_id = $1", s); }), "SC003");
  }
  {
    pqxx::work txn(*conn);
    txn.exec("set local scribe.redaction = 'on'");
    EXPECT_EQ(sqlstate_of([&] {
                txn.exec_params("update events set type = 'Other', redacted_at = now() where stream_id = $1", s);
              }),
              "SC003");
  }
  {
    pqxx::work txn(*conn);
    txn.exec("set local scribe.redaction = 'on'");
    // redacted_at must be set.
    EXPECT_EQ(sqlstate_of([&] { txn.exec_params("update events set data = '{}'::jsonb where stream_id = $1", s); }),
              "SC003");
  }
  {
    pqxx::work txn(*conn);
    txn.exec("set local scribe.redaction = 'on'");
    EXPECT_EQ(sqlstate_of([&] {
                txn.exec_params("update events set version = version + 100, redacted_at = now() where stream_id = $1",
                                s);
              }),
              "SC003");
  }

  auto stored = read_stream(*conn, s);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].data, (Json{{"n", 1}}));
  EXPECT_EQ(stored[1].data, (Json{{"n", 2}}));
  EXPECT_EQ(stored[1].version, 2);
}

// Redaction "may only replace `data` and set `redacted_at`"
// (migrations/001_eventstore.sql): the metadata (principal, request and
// causation ids) is part of the audit trail and must not be rewritable.
TEST_F(EventStoreTest, RedactionCannotRewriteMetadata) {
  auto conn = connect();
  const std::string s = unique("es-redact-meta");
  append_committed(*conn, s, ExpectedVersion::no_stream(), {ev("A", 1)});
  {
    pqxx::work txn(*conn);
    txn.exec("set local scribe.redaction = 'on'");
    EXPECT_EQ(sqlstate_of([&] {
                txn.exec_params(
                    "update events set metadata = '{\"principal\": \"someone else\"}'::jsonb, redacted_at = now() "
                    "where stream_id = $1",
                    s);
              }),
              "SC003");
  }
  EXPECT_EQ(read_stream(*conn, s).at(0).metadata, (Json{{"principal", "test"}}));
}

TEST_F(EventStoreTest, RedactStreamReplacesDataOnly) {
  auto conn = connect();
  const std::string s = unique("es-redact");
  auto original = append_committed(
      *conn, s, ExpectedVersion::no_stream(),
      {NewEvent{"TestQuoted", Json{{"text", "secret words"}, {"amount_micros", 1500}}, Json{{"k", 1}}},
       NewEvent{"TestCompleted", Json{{"text", "more secrets"}, {"amount_micros", 700}}, Json{{"k", 2}}}});
  const std::string other = unique("es-redact-untouched");
  append_committed(*conn, other, ExpectedVersion::no_stream(), {NewEvent{"X", Json{{"text", "keep me"}}}});

  std::vector<std::string> seen_types;
  {
    pqxx::work txn(*conn);
    int n = EventStore::redact_stream(txn, s, [&](const std::string& type, const Json& data) {
      seen_types.push_back(type);
      return Json{{"amount_micros", data.at("amount_micros")}};
    });
    EXPECT_EQ(n, 2);
    // The setting is switched off again: a further plain update in the same transaction fails.
    EXPECT_EQ(sqlstate_of([&] {
                txn.exec_params("update events set data = '{}'::jsonb, redacted_at = now() where stream_id = $1", s);
              }),
              "SC003");
  }
  // That failure aborted the transaction, so nothing was redacted yet.
  EXPECT_EQ(read_stream(*conn, s)[0].data.at("text"), "secret words");

  {
    pqxx::work txn(*conn);
    EXPECT_EQ(EventStore::redact_stream(txn, s,
                                        [](const std::string&, const Json& data) {
                                          return Json{{"amount_micros", data.at("amount_micros")}};
                                        }),
              2);
    txn.commit();
  }
  EXPECT_EQ(seen_types, (std::vector<std::string>{"TestQuoted", "TestCompleted"}));

  auto stored = read_stream(*conn, s);
  ASSERT_EQ(stored.size(), 2u);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(stored[i].type, original[i].type);
    EXPECT_EQ(stored[i].version, original[i].version);
    EXPECT_EQ(stored[i].global, original[i].global);
    EXPECT_EQ(stored[i].metadata, original[i].metadata);
    EXPECT_EQ(stored[i].recorded_at, original[i].recorded_at);
    EXPECT_FALSE(stored[i].data.contains("text"));
  }
  EXPECT_EQ(stored[0].data, (Json{{"amount_micros", 1500}}));
  EXPECT_EQ(stored[1].data, (Json{{"amount_micros", 700}}));
  EXPECT_EQ(read_stream(*conn, other)[0].data, (Json{{"text", "keep me"}}));
  {
    pqxx::read_transaction txn(*conn);
    EXPECT_EQ(txn.exec_params("select count(*) from events where stream_id = $1 and redacted_at is not null", s)[0][0]
                  .as<int64_t>(),
              2);
    EXPECT_EQ(
        txn.exec_params("select count(*) from events where stream_id = $1 and redacted_at is not null", other)[0][0]
            .as<int64_t>(),
        0);
    // No trace of the text anywhere in the stream's rows.
    EXPECT_EQ(
        txn.exec_params("select count(*) from events where stream_id = $1 and data::text like '%secret%'", s)[0][0]
            .as<int64_t>(),
        0);
  }
  // Redacting again finds nothing left to redact.
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(EventStore::redact_stream(txn, s, [](const std::string&, const Json&) { return Json::object(); }), 0);
    txn.commit();
  }
  // And after redaction the events are as immutable as before.
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(sqlstate_of([&] {
                txn.exec_params("update events set data = '{}'::jsonb, redacted_at = now() where stream_id = $1", s);
              }),
              "SC003");
  }
  {
    pqxx::work txn(*conn);
    EXPECT_EQ(sqlstate_of([&] { txn.exec_params("delete from events where stream_id = $1", s); }), "SC003");
  }
  EXPECT_EQ(read_stream(*conn, s)[0].data, (Json{{"amount_micros", 1500}}));
}

}  // namespace
}  // namespace scribe::eventstore
