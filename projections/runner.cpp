#include "projections/runner.h"

#include <map>

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
const db::Statement kSelectCheckpoint{
    "projections.select_checkpoint", "select last_tx::text, last_position from projection_checkpoints where name = $1"};
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

const db::Statement kSessionLock{"projections.session_lock",
                                 "select pg_advisory_lock(hashtextextended('projection:' || $1, 0))"};
const db::Statement kSessionUnlock{"projections.session_unlock",
                                   "select pg_advisory_unlock(hashtextextended('projection:' || $1, 0))"};
const db::Statement kSetCheckpoint{"projections.set_checkpoint",
                                   "update projection_checkpoints set last_tx = $2::xid8, last_position = $3, "
                                   "updated_at = now() where name = $1"};
// The constraints backed by an index (primary key, unique, exclusion) and the
// foreign keys of a table, and its other indexes: what a shadow table built
// without them must be given before it replaces the table.
const db::Statement kTableConstraints{"projections.table_constraints",
                                      "select conname, pg_get_constraintdef(oid) from pg_constraint "
                                      "where conrelid = $1::regclass and contype in ('p', 'u', 'x', 'f') "
                                      "order by conname"};
const db::Statement kTableIndexes{"projections.table_indexes",
                                  "select i.relname, x.indisunique, pg_get_indexdef(x.indexrelid) "
                                  "from pg_index x join pg_class i on i.oid = x.indexrelid "
                                  "where x.indrelid = $1::regclass and not exists "
                                  "(select 1 from pg_constraint c where c.conrelid = x.indrelid "
                                  "and c.conindid = x.indexrelid) order by i.relname"};

// Events per batch of a bulk rebuild: large enough that the per-transaction
// work (commit, COPY set-up) is small beside the rows, small enough to keep
// the client's memory at a few tens of megabytes.
constexpr int kBulkBatch = 20000;

void truncate_tables(pqxx::work& txn, const Projection& p) {
  for (const auto& table : p.tables()) txn.exec("truncate " + txn.quote_name(table));
}

std::string shadow_name(const std::string& table) { return table + "__rebuild"; }

// Gives `shadow` the constraints and indexes of `table` under temporary names
// and swaps it in: drops `table`, renames the shadow and its constraints and
// indexes to the old names. Runs in the caller's transaction, so readers see
// the old table until it commits.
void swap_in_shadow(pqxx::work& txn, const std::string& table, const std::string& shadow) {
  const std::string t = txn.quote_name(table);
  const std::string sh = txn.quote_name(shadow);
  std::vector<std::pair<std::string, std::string>> renames;  // temporary -> original
  int n = 0;
  for (const auto& r : txn.exec_prepared(kTableConstraints.name, table)) {
    std::string tmp = shadow + "_c" + std::to_string(n++);
    txn.exec("alter table " + sh + " add constraint " + txn.quote_name(tmp) + " " + r[1].c_str());
    renames.emplace_back(tmp, r[0].c_str());
  }
  std::vector<std::pair<std::string, std::string>> index_renames;
  for (const auto& r : txn.exec_prepared(kTableIndexes.name, table)) {
    // pg_get_indexdef: CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING method (...) [...].
    std::string def = r[2].c_str();
    auto using_at = def.find(" USING ");
    if (using_at == std::string::npos) throw std::runtime_error("unexpected index definition: " + def);
    std::string tmp = shadow + "_i" + std::to_string(n++);
    txn.exec(std::string("create ") + (r[1].as<bool>() ? "unique " : "") + "index " + txn.quote_name(tmp) + " on " +
             sh + def.substr(using_at));
    index_renames.emplace_back(tmp, r[0].c_str());
  }
  txn.exec("drop table " + t);
  txn.exec("alter table " + sh + " rename to " + t);
  for (const auto& [tmp, orig] : renames)
    txn.exec("alter table " + t + " rename constraint " + txn.quote_name(tmp) + " to " + txn.quote_name(orig));
  for (const auto& [tmp, orig] : index_renames)
    txn.exec("alter index " + txn.quote_name(tmp) + " rename to " + txn.quote_name(orig));
}

// The bulk path of rebuild() for an asynchronous projection with a BulkWriter.
//
// It fills shadow copies of the projection's tables, created without indexes,
// batch by batch, each batch read (before the transaction has an id, as in
// catch_up) and written in a transaction of its own, so the long rebuild never
// holds back the xmin bound that every other reader of the log waits on. Then
// one transaction builds the indexes on the shadows, swaps them in for the old
// tables and sets the checkpoint to the last event written. Readers see the old
// rows until that commit, never a half-built table; the live runners (which
// take the same advisory lock per batch) skip this projection meanwhile and
// resume from the new checkpoint. A crash or error leaves at most stray shadow
// tables, which the next rebuild drops.
int64_t bulk_rebuild(pqxx::connection& conn, Projection& projection, const std::map<std::string, std::string>& shadow,
                     BulkWriter& writer) {
  const std::string name = projection.name();
  {
    pqxx::work txn(conn);
    txn.exec_prepared(kEnsureCheckpoint.name, name);
    txn.commit();
  }
  // A session lock, held across the batches' transactions: it excludes the
  // live runners' per-batch transaction locks on the same key.
  {
    pqxx::nontransaction txn(conn);
    txn.exec_prepared(kSessionLock.name, name);
  }
  struct Unlock {
    pqxx::connection& conn;
    const std::string& name;
    ~Unlock() {
      try {
        pqxx::nontransaction txn(conn);
        txn.exec_prepared(kSessionUnlock.name, name);
      } catch (const std::exception&) {
        // A broken connection has released its session locks already.
      }
    }
  } unlock{conn, name};
  {
    pqxx::work txn(conn);
    for (const auto& [table, sh] : shadow) {
      txn.exec("drop table if exists " + txn.quote_name(sh));
      txn.exec("create table " + txn.quote_name(sh) + " (like " + txn.quote_name(table) +
               " including defaults including constraints including generated)");
    }
    txn.commit();
  }
  int64_t total = 0;
  eventstore::GlobalPosition from;
  for (;;) {
    pqxx::work txn(conn);
    auto events = eventstore::EventStore::read_all(txn, from, kBulkBatch);
    if (events.empty()) break;
    writer.write(txn, events);
    txn.commit();
    from = events.back().global;
    total += static_cast<int64_t>(events.size());
    if (static_cast<int>(events.size()) < kBulkBatch) break;
  }
  {
    pqxx::work txn(conn);
    for (const auto& [table, sh] : shadow) swap_in_shadow(txn, table, sh);
    txn.exec_prepared(kSetCheckpoint.name, name, std::to_string(from.tx), from.position);
    txn.commit();
  }
  // Fresh planner statistics for the new tables (autovacuum would get there later).
  for (const auto& [table, sh] : shadow) {
    pqxx::nontransaction txn(conn);
    txn.exec("analyze " + txn.quote_name(table));
  }
  return total;
}

}  // namespace

eventstore::GlobalPosition checkpoint(pqxx::transaction_base& txn, const std::string& name) {
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

void ProjectionRunner::start() {
  thread_ = std::thread([this] { run(); });
}

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
    eventstore::GlobalPosition from = checkpoint(txn, name);
    auto events = eventstore::EventStore::read_all(txn, from, batch_size);
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
      eventstore::EventsWakeup wakeup(*conn);
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
    std::map<std::string, std::string> shadow;
    for (const auto& t : projection.tables()) shadow[t] = shadow_name(t);
    if (auto writer = projection.bulk_writer(shadow)) return bulk_rebuild(conn, projection, shadow, *writer);
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
  eventstore::GlobalPosition from;
  for (;;) {
    auto events = eventstore::EventStore::read_all_unbounded(txn, from, 5000);
    if (events.empty()) break;
    projection.apply_batch(txn, events);
    from = events.back().global;
    total += static_cast<int64_t>(events.size());
  }
  txn.commit();
  return total;
}

}  // namespace scribe::projections
