#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <string>

#include "common/db.h"

// Base fixture for *_pgtest.cpp: a real PostgreSQL, started by the test
// command (scripts/test.sh) and named by SCRIBE_TEST_DATABASE_URL. Tests share
// the database, so each one works on its own streams and accounts.
namespace scribe::testing {

std::string database_url();

class PgTest : public ::testing::Test {
 public:
  static void SetUpTestSuite();
  static std::unique_ptr<pqxx::connection> connect();
  // A name no other test (or earlier run) uses.
  static std::string unique(const std::string& prefix);
};

}  // namespace scribe::testing
