#pragma once
#include <atomic>
#include <string>
#include <thread>

#include "eventstore/event.h"
#include "projections/projection.h"

namespace scribe::projections {

// Feeds one asynchronous projection in global order. Each batch is read,
// applied and checkpointed in a single transaction, so after a crash the
// projection resumes exactly after the last committed batch: nothing is lost
// and nothing is applied twice. A transaction-scoped advisory lock lets several
// processes run the same runner safely; one of them does the work.
class ProjectionRunner {
 public:
  ProjectionRunner(std::string database_url, Projection& projection, int batch_size = 500);
  ~ProjectionRunner();
  void start();
  void stop();
  // Runs batches until the projection has caught up with what is readable now.
  // Returns the number of events applied. Used by `start` and by tests.
  static int64_t catch_up(pqxx::connection& conn, Projection& projection, int batch_size);

 private:
  void run();
  std::string url_;
  Projection& projection_;
  int batch_size_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

eventstore::GlobalPosition checkpoint(pqxx::transaction_base& txn, const std::string& name);
// Events appended but not yet applied by the projection (capped at 1,000,000).
int64_t lag(pqxx::transaction_base& txn, const std::string& name);

// Drops the projection's rows and replays every event from position 0.
// Inline projections are rebuilt under the exclusive inline lock, so no append
// can interleave. Asynchronous ones with a BulkWriter are loaded into shadow
// tables and swapped in at the end (runner.cpp, bulk_rebuild); the others
// reset their checkpoint and catch up.
int64_t rebuild(pqxx::connection& conn, Projection& projection);

}  // namespace scribe::projections
