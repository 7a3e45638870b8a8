#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <string>

#include "common/db.h"
#include "eventstore/event_store.h"

// Base fixture for *_pgtest.cpp: a real PostgreSQL, started by the test
// command (scripts/test.sh) and named by SCRIBE_TEST_DATABASE_URL. Tests share
// the database, so each one works on its own streams and accounts.
namespace scribe::testing {

std::string database_url();

class PgTest : public ::testing::Test {
 public:
  static void SetUpTestSuite();
  static std::unique_ptr<pqxx::connection> connect();
  // The store the service appends through, with its inline projections: what
  // commands in tests are given, so read models follow as they do in scribe.
  static const eventstore::EventStore& store();
  // A name no other test (or earlier run) uses.
  static std::string unique(const std::string& prefix);
};

// A migrated database of its own on the test cluster, dropped when it goes
// out of scope: for a test whose events must not reach the shared database
// (ones its read models never saw would break the tests that rebuild them and
// compare).
class PrivateDatabase {
 public:
  PrivateDatabase();
  ~PrivateDatabase();
  PrivateDatabase(const PrivateDatabase&) = delete;
  PrivateDatabase& operator=(const PrivateDatabase&) = delete;
  const std::string& url() const { return url_; }

 private:
  std::string name_;
  std::string url_;
};

}  // namespace scribe::testing
