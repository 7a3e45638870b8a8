// Connected apps from the grants' events: listed per client with what their
// live grants hold, and disconnected (every grant revoked, consent withdrawn)
// so that the verifier refuses their tokens on the next request.
#include "api/dashboard/connected_apps.h"

#include <gtest/gtest.h>

#include "api/oauth/token_verifier.h"
#include "commands/oauth_commands.h"
#include "common/error.h"
#include "domain/oauth.h"
#include "tests/pg_fixture.h"

namespace scribe::api::dashboard {
namespace {

const std::string kBase = "https://scribe.example";
const commands::Meta kMeta{"test", ""};

class ConnectedAppsTest : public testing::PgTest {
 protected:
  void SetUp() override {
    conn_ = connect();
    account_ = commands::open_account(store(), *conn_, unique("apps") + "@example.com", plans::Tier::Free, kMeta);
  }
  std::string client(const std::string& name) {
    scribe::oauth::ClientRecord c;
    c.client_id = unique("dcr_app");
    c.client_name = name;
    c.redirect_uris = {"http://127.0.0.1:9/cb", "com.example.app:/cb"};
    c.application_type = "native";
    commands::register_client(store(), *conn_, c, kMeta);
    return c.client_id;
  }
  int64_t grant(const std::string& client_id, const std::vector<std::string>& resources) {
    const int64_t id = commands::next_grant_id(*conn_);
    commands::issue_grant(store(), *conn_, id, account_, client_id, resources, kMeta);
    return id;
  }
  std::string access_token(int64_t grant_id, const std::string& client_id) {
    const std::string t = scribe::oauth::generate_access_token();
    pqxx::nontransaction txn(*conn_);
    txn.exec_params(
        "insert into oauth_tokens(token_hash, kind, grant_id, account_id, client_id, resources, expires_at) "
        "values ($1, 'access', $2, $3, $4, '{}', now() + interval '1 hour')",
        scribe::oauth::hash_secret(t), grant_id, account_, client_id);
    return t;
  }
  bool token_works(const std::string& t) {
    oauth::TokenVerifier v;
    pqxx::nontransaction txn(*conn_);
    try {
      return v.verify(txn, t).has_value();
    } catch (const Error&) {
      return false;
    }
  }

  std::unique_ptr<pqxx::connection> conn_;
  int64_t account_ = 0;
};

TEST_F(ConnectedAppsTest, EachClientWithALiveGrantIsListedOnceTheConsoleNever) {
  const auto one = client("One"), two = client("Two");
  grant(one, {kBase});
  grant(one, {kBase + "/mcp"});
  grant(two, {kBase});
  grant(std::string(scribe::oauth::kConsoleClientId), {kBase});
  const Json apps = list_connected_apps(*conn_, account_);
  ASSERT_EQ(apps.size(), 2u) << apps.dump();
  EXPECT_EQ(apps[0]["client_id"], one);
  EXPECT_EQ(apps[0]["client_name"], "One");
  EXPECT_EQ(apps[0]["kind"], "dcr");
  EXPECT_EQ(apps[0]["grants"], 2);
  EXPECT_EQ(apps[0]["resources"], Json::array({kBase, kBase + "/mcp"}));
  EXPECT_EQ(apps[0]["redirect_hosts"], Json::array({"127.0.0.1:9", "com.example.app"}));
  EXPECT_TRUE(apps[0]["last_token_at"].is_null());
  EXPECT_EQ(apps[1]["client_id"], two);
}

TEST_F(ConnectedAppsTest, DisconnectingRevokesEveryGrantOfThatClientOnlyAndItsTokensStop) {
  const auto one = client("One"), two = client("Two");
  const auto a = access_token(grant(one, {kBase}), one);
  const auto b = access_token(grant(one, {kBase}), one);
  const auto c = access_token(grant(two, {kBase}), two);
  commands::give_consent(store(), *conn_, account_, one, kMeta);
  ASSERT_TRUE(token_works(a));
  EXPECT_EQ(list_connected_apps(*conn_, account_)[0]["last_token_at"].is_string(), true);
  disconnect_app(store(), *conn_, account_, one, kMeta);
  EXPECT_FALSE(token_works(a));
  EXPECT_FALSE(token_works(b));
  EXPECT_TRUE(token_works(c));
  const Json apps = list_connected_apps(*conn_, account_);
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0]["client_id"], two);
  pqxx::nontransaction txn(*conn_);
  EXPECT_EQ(
      txn.exec_params1("select count(*) from oauth_consents where account_id = $1 and client_id = $2", account_, one)[0]
          .as<int>(),
      0);
}

TEST_F(ConnectedAppsTest, NothingToDisconnectIsNotFoundAndSoIsTheConsole) {
  const auto one = client("One");
  EXPECT_THROW(disconnect_app(store(), *conn_, account_, one, kMeta), Error);
  const std::string console(scribe::oauth::kConsoleClientId);
  const auto t = access_token(grant(console, {kBase}), console);
  try {
    disconnect_app(store(), *conn_, account_, console, kMeta);
    FAIL() << "the console was disconnected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "not_found");
  }
  EXPECT_TRUE(token_works(t));
}

}  // namespace
}  // namespace scribe::api::dashboard
