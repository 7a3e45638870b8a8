// Passwords and the sign-in limit against a real PostgreSQL.
#include "api/oauth/credentials.h"

#include "commands/account_commands.h"
#include "domain/limits.h"
#include "tests/error_of.h"
#include "tests/pg_fixture.h"

namespace scribe::api::oauth {
namespace {

using testing::code_of;

class OAuthCredentials : public testing::PgTest {};

TEST_F(OAuthCredentials, PasswordSetCheckedAndReplaced) {
  auto conn = connect();
  const std::string email = unique("pw") + "@example.com";
  const int64_t id = commands::open_account(store(), *conn, email, plans::Tier::Free, {"test", ""});
  // No password yet: nobody signs in.
  EXPECT_FALSE(check_password(*conn, email, "0123456789", 10));
  EXPECT_EQ(set_password(*conn, email, "first password", 10), id);
  EXPECT_EQ(check_password(*conn, email, "first password", 10), id);
  // The email's case and surrounding blanks do not matter; the password's do.
  EXPECT_EQ(check_password(*conn, " " + email.substr(0, 1) + email.substr(1), "first password", 10), id);
  EXPECT_FALSE(check_password(*conn, email, "First password", 10));
  EXPECT_FALSE(check_password(*conn, "nobody-" + email, "first password", 10));
  EXPECT_EQ(set_password(*conn, email, "second password", 10), id);
  EXPECT_FALSE(check_password(*conn, email, "first password", 10));
  EXPECT_EQ(check_password(*conn, email, "second password", 10), id);
  {
    pqxx::nontransaction txn(*conn);
    auto stored = txn.exec_params1("select password_hash from user_credentials where account_id = $1", id);
    EXPECT_EQ(stored[0].as<std::string>().rfind("scrypt$10$8$1$", 0), 0u);
  }
  EXPECT_EQ(code_of([&] { set_password(*conn, email, "short", 10); }), "invalid_request");
  EXPECT_EQ(code_of([&] { set_password(*conn, "nobody-" + email, "long enough password", 10); }), "not_found");
}

TEST_F(OAuthCredentials, FailuresLimitedPerAddressAndPerEmail) {
  auto conn = connect();
  const std::string addr = unique("10.0.0.");
  const std::string email = unique("victim") + "@example.com";
  for (int i = 0; i < limits::kOAuthSignInFailuresMax; ++i) {
    EXPECT_FALSE(sign_in_blocked(*conn, addr, email)) << i;
    record_sign_in_failure(*conn, addr, email);
  }
  EXPECT_TRUE(sign_in_blocked(*conn, addr, email));
  // The address is blocked for any email, and the email from any address.
  EXPECT_TRUE(sign_in_blocked(*conn, addr, "other-" + email));
  EXPECT_TRUE(sign_in_blocked(*conn, unique("10.0.1."), email));
  EXPECT_TRUE(sign_in_blocked(*conn, unique("10.0.1."), " " + email.substr(0, 3) + email.substr(3)));
  EXPECT_FALSE(sign_in_blocked(*conn, unique("10.0.1."), "other-" + email));
  // Out of the window: free again.
  {
    pqxx::nontransaction txn(*conn);
    txn.exec_params(
        "update oauth_sign_in_failures set failed_at = now() - interval '16 minutes' "
        "where bucket in ($1, $2)",
        "addr:" + addr, "email:" + email);
  }
  EXPECT_FALSE(sign_in_blocked(*conn, addr, email));
  EXPECT_GE(sweep_sign_in_failures(*conn), 2);
}

}  // namespace
}  // namespace scribe::api::oauth
