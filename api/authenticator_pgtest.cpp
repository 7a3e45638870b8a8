// The authenticator's database paths: an unknown key costs one lookup and is
// then refused from memory; a key this process has authenticated still works
// from an address that is over its failed-authentication budget.
#include "api/authenticator.h"

#include <gtest/gtest.h>

#include "commands/account_commands.h"
#include "common/error.h"
#include "domain/limits.h"
#include "tests/bearer_request.h"
#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

class AuthenticatorTest : public testing::PgTest {};

using testing::bearer_request;

TEST_F(AuthenticatorTest, AnUnknownKeyIsLookedUpOnceThenRefusedFromMemory) {
  auto conn = connect();
  Authenticator auth;
  const std::string unknown = "key_live_" + std::string(40, 'Z');
  auto req = bearer_request(unknown, "198.51.100.1");
  auth.screen(req);
  {
    pqxx::nontransaction txn(*conn);
    EXPECT_THROW(auth.authenticate(txn, req), Error);
  }
  EXPECT_EQ(auth.lookups(), 1u);
  try {
    auth.screen(req);
    FAIL() << "the unknown key passed the screen again";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "invalid_api_key");
  }
  EXPECT_EQ(auth.lookups(), 1u);
}

TEST_F(AuthenticatorTest, AKnownKeyStillWorksFromAnAddressOverItsFailureBudget) {
  auto conn = connect();
  const commands::Meta meta{"test", ""};
  int64_t account =
      commands::open_account(store(), *conn, unique("authscreen") + "@example.com", plans::Tier::Free, meta);
  auto key =
      commands::create_key(store(), *conn, account, "test", apikey::Permission::Full, std::nullopt, std::nullopt, meta);
  const std::string address = "198.51.100.2";
  Authenticator auth;
  {
    pqxx::nontransaction txn(*conn);
    EXPECT_EQ(auth.authenticate(txn, bearer_request(key.plaintext, address)).account_id, account);
  }
  auto other = bearer_request("key_live_" + std::string(40, 'Y'), address);
  for (int i = 0; i < limits::kAuthFailuresPerMinute; ++i) auth.record_failure(other);
  try {
    auth.screen(other);
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "rate_limited");
  }
  auth.screen(bearer_request(key.plaintext, address));  // goes on to its (still required) lookup
  pqxx::nontransaction txn(*conn);
  EXPECT_EQ(auth.authenticate(txn, bearer_request(key.plaintext, address)).account_id, account);
}

}  // namespace
}  // namespace scribe::api
