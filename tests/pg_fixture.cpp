#include "tests/pg_fixture.h"

#include <cstdlib>

#include "eventstore/migrator.h"
#include "projections/projection.h"

namespace scribe::testing {

std::string database_url() {
  const char* url = std::getenv("SCRIBE_TEST_DATABASE_URL");
  if (!url || !*url) throw std::runtime_error("SCRIBE_TEST_DATABASE_URL is not set; run scripts/test.sh");
  return url;
}

void PgTest::SetUpTestSuite() {
  // Processes the tests spawn (`scribe worker`) run no pipeline workers unless
  // a test asks for them: the tests share one database, and a worker would
  // otherwise process every other test's queued jobs. Webhook senders alike:
  // they would send (and fail) other tests' outbox rows.
  setenv("SCRIBE_WORKER_SLOTS", "0", 0);
  setenv("SCRIBE_WEBHOOK_SENDERS", "0", 0);
  auto conn = db::open_connection(database_url(), false);
  eventstore::migrate(*conn);
  projections::install_inline_hook();
}

std::unique_ptr<pqxx::connection> PgTest::connect() { return db::open_connection(database_url()); }

std::string PgTest::unique(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr)) + "-" +
         std::to_string(counter++);
}

}  // namespace scribe::testing
