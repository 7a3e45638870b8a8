#pragma once
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "eventstore/event.h"

namespace scribe::projections {

// Writes a projection's rows during a bulk rebuild (rebuild() in runner.h).
// It is handed every event in global order, in batches, each batch in a
// transaction of its own, and writes into empty shadow tables that have no
// indexes yet. It is the only writer of those tables, so it may keep state in
// memory (running balances, say) instead of reading it back, and may write
// with COPY. The swap drops the old tables, so a projection offers a bulk
// writer only for tables that no view or other table's foreign key refers to
// (the DROP would fail, and the rebuild would change nothing).
class BulkWriter {
 public:
  virtual ~BulkWriter() = default;
  virtual void write(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) = 0;
};

// A read model built from the event log. `apply` must be a pure function of
// the event and the projection's own tables, so that replaying from position
// 0 rebuilds exactly the same rows.
class Projection {
 public:
  virtual ~Projection() = default;
  virtual std::string name() const = 0;
  // The tables this projection owns, emptied on rebuild and compared by tests.
  virtual std::vector<std::string> tables() const = 0;
  // Inline projections are written in the appending transaction (read-your-
  // writes); the others are fed by a ProjectionRunner after commit.
  virtual bool is_inline() const = 0;
  virtual void apply(pqxx::work& txn, const eventstore::RecordedEvent& event) = 0;
  // Applies consecutive events in order. Projections whose rows can be written
  // in bulk override this (rebuilds replay millions of events); the result must
  // equal calling apply() on each event.
  virtual void apply_batch(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) {
    for (const auto& e : events) apply(txn, e);
  }
  // Asynchronous projections may offer a bulk writer for rebuilds; `shadow`
  // maps each of tables() to the table to write instead. The rows it writes
  // for the whole log must equal what apply() writes. nullptr (the default):
  // rebuilds replay apply_batch() into the real tables.
  virtual std::unique_ptr<BulkWriter> bulk_writer(const std::map<std::string, std::string>& shadow) {
    (void)shadow;
    return nullptr;
  }
};

// Every projection of the service, inline and asynchronous.
const std::vector<Projection*>& all();
Projection* find(const std::string& name);

}  // namespace scribe::projections
