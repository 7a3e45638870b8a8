#include "tests/pg_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "api/upload_store.h"
#include "common/object_store.h"
#include "eventstore/migrator.h"
#include "projections/inline_projections.h"

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
  // This process's own stores, as `scribe serve` configures them from its settings.
  // One folder per test database, so artifacts written by one run of the
  // tests are found by the next run against the same database.
  static const std::string scratch = (std::filesystem::temp_directory_path() /
                                      ("scribe-pgtest-" + std::to_string(std::hash<std::string>{}(database_url()))))
                                         .string();
  configure_object_store(scratch + "/objects");
  api::uploads::configure_staging(scratch + "/work");
  // ... and the `scribe` processes the tests spawn share them.
  setenv("SCRIBE_OBJECT_STORE_DIR", (scratch + "/objects").c_str(), 1);
  setenv("SCRIBE_WORK_DIR", (scratch + "/work").c_str(), 1);
  auto conn = db::open_connection(database_url(), false);
  eventstore::migrate(*conn);
}

std::unique_ptr<pqxx::connection> PgTest::connect() { return db::open_connection(database_url()); }

const eventstore::EventStore& PgTest::store() {
  static const eventstore::EventStore store(projections::inline_projections());
  return store;
}

std::string PgTest::unique(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr)) + "-" +
         std::to_string(counter++);
}

namespace {

// `url` with its database name (the last path segment) replaced.
std::string with_database(const std::string& url, const std::string& name) {
  const auto query = url.find('?');
  const std::string base = url.substr(0, query);
  const std::string rest = query == std::string::npos ? "" : url.substr(query);
  const auto scheme = base.find("://");
  const auto slash = base.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) return base + "/" + name + rest;
  return base.substr(0, slash + 1) + name + rest;
}

}  // namespace

PrivateDatabase::PrivateDatabase() : name_(PgTest::unique("scribe_private")) {
  {
    auto conn = db::open_connection(database_url(), false);
    pqxx::nontransaction txn(*conn);
    txn.exec0("create database " + txn.quote_name(name_));
  }
  url_ = with_database(database_url(), name_);
  auto conn = db::open_connection(url_, false);
  eventstore::migrate(*conn);
}

PrivateDatabase::~PrivateDatabase() {
  try {
    // Forced: this process's event notifier keeps a connection to it open.
    auto conn = db::open_connection(database_url(), false);
    pqxx::nontransaction txn(*conn);
    txn.exec0("drop database if exists " + txn.quote_name(name_) + " with (force)");
  } catch (const std::exception&) {
    // A database left behind costs disk only; the cluster is the test run's.
  }
}

}  // namespace scribe::testing
