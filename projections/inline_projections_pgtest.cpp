// An event store carries its inline projections: a store built with
// projections::inline_projections() updates the inline read models inside the
// appending transaction (by either append path), and a store built with
// EventStore::without_inline_projections(), the only way to get one without
// them, appends the events and leaves every read model as it was.
#include "projections/inline_projections.h"

#include <type_traits>

#include "domain/account.h"
#include "eventstore/event_store.h"
#include "projections/runner.h"
#include "tests/pg_fixture.h"

namespace scribe::projections {
namespace {

using eventstore::EventStore;
using eventstore::ExpectedVersion;

class InlineProjectionsTest : public testing::PgTest {
 protected:
  // An account id drawn outside any appending transaction (an append must be
  // its transaction's first write).
  static int64_t next_account_id(pqxx::connection& conn) {
    pqxx::nontransaction txn(conn);
    return txn.exec1("select nextval('account_ids')")[0].as<int64_t>();
  }
  static std::vector<eventstore::NewEvent> open_events(int64_t id) {
    return account::open(id, unique("inline") + "@example.com", plans::Tier::Free);
  }
  // The account's row in the inline `accounts` read model, as `txn` sees it:
  // its balance, or -1 when there is no row.
  static int64_t balance_row(pqxx::transaction_base& txn, int64_t id) {
    auto r = txn.exec_params("select balance_micros from accounts where id = $1", id);
    return r.empty() ? -1 : r[0][0].as<int64_t>();
  }
  static int64_t balance_row(pqxx::connection& conn, int64_t id) {
    pqxx::read_transaction txn(conn);
    return balance_row(txn, id);
  }
  static std::size_t events_of(pqxx::connection& conn, int64_t id) {
    pqxx::read_transaction txn(conn);
    return EventStore::read_stream(txn, account::stream_id(id)).size();
  }
  static std::vector<eventstore::NewEvent> deposit_events(pqxx::connection& conn, int64_t id, money::Micros amount) {
    pqxx::read_transaction txn(conn);
    return account::deposit(account::fold(EventStore::read_stream(txn, account::stream_id(id))), amount, "inline");
  }
};

TEST_F(InlineProjectionsTest, AStoreCannotBeBuiltWithoutNamingItsInlineProjections) {
  // Forgetting them does not compile: there is no default constructor, and a
  // projector does not turn into a store by itself.
  static_assert(!std::is_default_constructible_v<EventStore>);
  static_assert(!std::is_convertible_v<std::shared_ptr<const eventstore::InlineProjector>, EventStore>);
  // A null projector is refused, naming the two ways to build one.
  try {
    EventStore store{std::shared_ptr<const eventstore::InlineProjector>()};
    FAIL() << "a store was built with a null projector";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("projections::inline_projections()"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("EventStore::without_inline_projections()"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(EventStore(inline_projections()).projects_inline());
  EXPECT_FALSE(EventStore::without_inline_projections().projects_inline());
}

TEST_F(InlineProjectionsTest, AnAppendThroughTheServiceStoreUpdatesTheReadModelInItsOwnTransaction) {
  const EventStore store(inline_projections());
  auto conn = connect();
  auto other = connect();
  const int64_t id = next_account_id(*conn);
  {
    pqxx::work txn(*conn);
    store.append(txn, account::stream_id(id), ExpectedVersion::no_stream(), open_events(id));
    // The row is written by the append itself: visible inside the transaction,
    // to no one else before the commit.
    EXPECT_EQ(balance_row(txn, id), 0);
    EXPECT_EQ(balance_row(*other, id), -1);
    EventStore::commit(txn);
  }
  EXPECT_EQ(balance_row(*other, id), 0);

  // The group-commit path runs the same projections in the shared
  // transaction: the caller reads its write as soon as the append returns.
  const auto version = static_cast<int64_t>(events_of(*conn, id));
  store.append_and_commit(
      *conn, {{account::stream_id(id), ExpectedVersion::exact(version), deposit_events(*conn, id, 1'250'000)}});
  EXPECT_EQ(balance_row(*other, id), 1'250'000);

  // A rolled-back append leaves neither the events nor the row.
  const int64_t gone = next_account_id(*conn);
  {
    pqxx::work txn(*conn);
    store.append(txn, account::stream_id(gone), ExpectedVersion::no_stream(), open_events(gone));
    EXPECT_EQ(balance_row(txn, gone), 0);
    txn.abort();
  }
  EXPECT_EQ(events_of(*other, gone), 0u);
  EXPECT_EQ(balance_row(*other, gone), -1);
}

TEST_F(InlineProjectionsTest, AStoreBuiltWithoutInlineProjectionsAppendsEventsThatNoReadModelSees) {
  // In a database of its own: the shared one's rebuild tests require every
  // event of its log to be in its read models.
  const testing::PrivateDatabase private_db;
  auto conn = db::open_connection(private_db.url());
  const EventStore unprojected = EventStore::without_inline_projections();
  const int64_t id = next_account_id(*conn);
  {
    pqxx::work txn(*conn);
    const auto recorded =
        unprojected.append(txn, account::stream_id(id), ExpectedVersion::no_stream(), open_events(id));
    EXPECT_FALSE(recorded.empty());
    EXPECT_EQ(balance_row(txn, id), -1);
    EventStore::commit(txn);
  }
  const std::size_t opened = events_of(*conn, id);
  EXPECT_GT(opened, 0u);
  EXPECT_EQ(balance_row(*conn, id), -1);

  // Nor through group commit.
  const auto version = static_cast<int64_t>(opened);
  unprojected.append_and_commit(
      *conn, {{account::stream_id(id), ExpectedVersion::exact(version), deposit_events(*conn, id, 1'000'000)}});
  EXPECT_EQ(events_of(*conn, id), opened + 1);
  EXPECT_EQ(balance_row(*conn, id), -1);

  // The events are in the log, only the read model skipped them: a rebuild
  // from the log writes the row they make.
  rebuild(*conn, *find("accounts"));
  EXPECT_EQ(balance_row(*conn, id), 1'000'000);
}

}  // namespace
}  // namespace scribe::projections
