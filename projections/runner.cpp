#include "projections/runner.h"

#include "common/db.h"
#include "common/log.h"
#include "eventstore/event_store.h"
#include "eventstore/wakeup.h"

namespace scribe::projections {
namespace {

const db::Statement kTryLock{"projections.try_lock",
                             "select pg_try_advisory_xact_lock(hashtextextended('projection:' || $1, 0))"};
const db::Statement kLock{"projections.lock", "select pg_advisory_xact_lock(hashtextextended('projection:' || $1, 0))"};
const db::Statement kEnsureCheckpoint{"projections.ensure_checkpoint",
                                      "insert into projection_checkpoints(name) values ($1) on conflict do nothing"};
const db::Statement kSelectCheckpoint{"projections.select_checkpoint",
                                      "select last_tx::text, last_position from projection_checkpoints where name = $1"};
const db::Statement kAdvanceCheckpoint{"projections.advance_checkpoint",
                                       "update projection_checkpoints set last_tx = $2::xid8, last_position = $3, "
                                       "updated_at = now() where name = $1 and last_tx = $4::xid8 and "
                                       "last_position = $5"};
const db::Statement kResetCheckpoint{"projections.reset_checkpoint",
                                     "update projection_checkpoints set last_tx = '0'::xid8, last_position = 0, "
                                     "updated_at = now() where name = $1"};
const db::Statement kLag{"projections.lag",
                         "select count(*) from (select 1 from events e, projection_checkpoints c "
                         "where c.name = $1 and (e.tx, e.position) > (c.last_tx, c.last_position) "
                         "limit 1000000) x"};
const db::Statement kInlineExclusive{"projections.inline_exclusive",
                                     "select pg_advisory_xact_lock(hashtextextended('projections:inline', 0))"};

void truncate_tables(pqxx::work& txn, const Projection& p) {
  for (const auto& table : p.tables()) txn.exec("truncate " + txn.quote_name(table));
}

}  // namespace

es::GlobalPosition checkpoint(pqxx::transaction_base& txn, const std::string& name) {
  auto res = txn.exec_prepared(kSelectCheckpoint.name, name);
  if (res.empty()) return {};
  return {std::stoull(res[0][0].c_str()), res[0][1].as<int64_t>()};
}

int64_t lag(pqxx::transaction_base& txn, const std::string& name) {
  return txn.exec_prepared1(kLag.name, name)[0].as<int64_t>();
}

ProjectionRunner::ProjectionRunner(std::string database_url, Projection& projection, int batch_size)
    : url_(std::move(database_url)), projection_(projection), batch_size_(batch_size) {}

ProjectionRunner::~ProjectionRunner() { stop(); }

void ProjectionRunner::start() { thread_ = std::thread([this] { run(); }); }

void ProjectionRunner::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

int64_t ProjectionRunner::catch_up(pqxx::connection& conn, Projection& projection, int batch_size) {
  const std::string name = projection.name();
  {
    pqxx::work txn(conn);
    txn.exec_prepared(kEnsureCheckpoint.name, name);
    txn.commit();
  }
  int64_t applied = 0;
  for (;;) {
    pqxx::work txn(conn);
    // Taking the lock assigns no transaction id, so the xmin bound of the read
    // below is not held back by this transaction itself.
    if (!txn.exec_prepared1(kTryLock.name, name)[0].as<bool>()) return applied;
    es::GlobalPosition from = checkpoint(txn, name);
    auto events = es::EventStore::read_all(txn, from, batch_size);
    if (events.empty()) return applied;
    projection.apply_batch(txn, events);
    const auto& last = events.back().global;
    auto res = txn.exec_prepared(kAdvanceCheckpoint.name, name, std::to_string(last.tx), last.position,
                                 std::to_string(from.tx), from.position);
    if (res.affected_rows() != 1) throw std::runtime_error("checkpoint of " + name + " moved underneath us");
    txn.commit();
    applied += static_cast<int64_t>(events.size());
    if (static_cast<int>(events.size()) < batch_size) return applied;
  }
}

void ProjectionRunner::run() {
  while (!stop_) {
    try {
      auto conn = db::open_connection(url_);
      es::EventsWakeup wakeup(*conn);
      while (!stop_) {
        catch_up(*conn, projection_, batch_size_);
        conn->await_notification(0, 200000);
      }
    } catch (const std::exception& err) {
      log::error("projection runner failed; retrying", {{"projection", projection_.name()}, {"error", err.what()}});
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

int64_t rebuild(pqxx::connection& conn, Projection& projection) {
  const std::string name = projection.name();
  if (!projection.is_inline()) {
    {
      pqxx::work txn(conn);
      txn.exec_prepared(kEnsureCheckpoint.name, name);
      txn.exec_prepared(kLock.name, name);
      truncate_tables(txn, projection);
      txn.exec_prepared(kResetCheckpoint.name, name);
      txn.commit();
    }
    int64_t total = 0;
    for (;;) {
      int64_t n = ProjectionRunner::catch_up(conn, projection, 5000);
      total += n;
      if (n == 0) {
        // Either caught up or a live runner holds the lock for a moment.
        pqxx::read_transaction txn(conn);
        if (lag(txn, name) == 0) return total;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  pqxx::work txn(conn);
  txn.exec_prepared(kInlineExclusive.name);
  truncate_tables(txn, projection);
  int64_t total = 0;
  es::GlobalPosition from;
  for (;;) {
    auto events = es::EventStore::read_all_unbounded(txn, from, 5000);
    if (events.empty()) break;
    projection.apply_batch(txn, events);
    from = events.back().global;
    total += static_cast<int64_t>(events.size());
  }
  txn.commit();
  return total;
}

}  // namespace scribe::projections
