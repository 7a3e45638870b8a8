// The OAuth commands against a real PostgreSQL: clients registered (DCR once,
// metadata documents again only when they change), their use recorded at
// most daily and unused ones expired; consents given and withdrawn once;
// grants issued once and revoked once, also all of one app for a person.
#include "commands/oauth_commands.h"

#include "domain/events.h"
#include "tests/pg_fixture.h"

namespace scribe::commands {
namespace {

class OAuthCommands : public testing::PgTest {
 protected:
  static Meta meta() { return {"test", ""}; }
  static int64_t count(pqxx::connection& conn, const std::string& sql) {
    pqxx::nontransaction txn(conn);
    return txn.exec(sql)[0][0].as<int64_t>();
  }
  static std::string quoted(const std::string& s) { return "'" + s + "'"; }
  // The read model as its events wrote it, after a test moved registered_at
  // back to stand for time passing (the rebuild test compares the two).
  static void restore_registered_at(pqxx::connection& conn, const std::vector<std::string>& ids) {
    pqxx::nontransaction txn(conn);
    for (const auto& id : ids)
      txn.exec_params(
          "update oauth_clients set registered_at = (select max(recorded_at) from events where stream_id = $2 "
          "and type = $3) where client_id = $1",
          id, oauth::client_stream(id), events::kOAuthClientRegistered);
  }
  static int64_t stream_length(pqxx::connection& conn, const std::string& stream) {
    pqxx::read_transaction txn(conn);
    return static_cast<int64_t>(eventstore::EventStore::read_stream(txn, stream).size());
  }
};

TEST_F(OAuthCommands, DcrClientRegisteredOnce) {
  auto conn = connect();
  oauth::ClientRecord c{
      oauth::generate_dcr_client_id(), oauth::ClientKind::Dcr, "Claude", {"http://127.0.0.1:3000/cb"}, "native"};
  EXPECT_TRUE(register_client(store(), *conn, c, meta()));
  pqxx::nontransaction txn(*conn);
  auto row = txn.exec_params1(
      "select kind, client_name, redirect_uris::text, application_type, deleted_at is null from oauth_clients "
      "where client_id = $1",
      c.client_id);
  EXPECT_EQ(row[0].as<std::string>(), "dcr");
  EXPECT_EQ(row[1].as<std::string>(), "Claude");
  EXPECT_EQ(Json::parse(row[2].as<std::string>()), Json::array({"http://127.0.0.1:3000/cb"}));
  EXPECT_EQ(row[3].as<std::string>(), "native");
  EXPECT_TRUE(row[4].as<bool>());
  txn.commit();
  // The same id twice is a conflict (ids are random; this never happens by chance).
  EXPECT_THROW(register_client(store(), *conn, c, meta()), eventstore::ConcurrencyError);
}

TEST_F(OAuthCommands, MetadataDocumentClientRegisteredAgainOnlyWhenChanged) {
  auto conn = connect();
  const std::string id = "https://" + unique("app") + ".example/client.json";
  oauth::ClientRecord c{id, oauth::ClientKind::Cimd, "App", {"https://app.example/cb"}, "web"};
  EXPECT_TRUE(register_client(store(), *conn, c, meta()));
  EXPECT_FALSE(register_client(store(), *conn, c, meta()));
  c.redirect_uris.push_back("https://app.example/cb2");
  EXPECT_TRUE(register_client(store(), *conn, c, meta()));
  c.client_name = std::nullopt;
  EXPECT_TRUE(register_client(store(), *conn, c, meta()));
  EXPECT_FALSE(register_client(store(), *conn, c, meta()));
  EXPECT_EQ(stream_length(*conn, oauth::client_stream(id)), 3);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_clients where client_id = " + quoted(id) +
                             " and client_name is null and jsonb_array_length(redirect_uris) = 2"),
            1);
  // Expired, then seen again: registered again and live.
  {
    pqxx::nontransaction txn(*conn);
    txn.exec_params("update oauth_clients set registered_at = now() - interval '40 days' where client_id = $1", id);
  }
  EXPECT_GE(expire_unused_clients(store(), *conn, now() - std::chrono::hours(24 * 30), 1000, meta()), 1);
  EXPECT_EQ(count(*conn,
                  "select count(*) from oauth_clients where client_id = " + quoted(id) + " and deleted_at is not null"),
            1);
  EXPECT_TRUE(register_client(store(), *conn, c, meta()));
  EXPECT_EQ(count(*conn, "select count(*) from oauth_clients where client_id = " + quoted(id) +
                             " and deleted_at is null and last_used_at is null"),
            1);
}

TEST_F(OAuthCommands, UseRecordedAtMostDailyAndUnusedClientsExpire) {
  auto conn = connect();
  oauth::ClientRecord used{
      oauth::generate_dcr_client_id(), oauth::ClientKind::Dcr, std::nullopt, {"https://a.example/cb"}, "web"};
  oauth::ClientRecord idle{
      oauth::generate_dcr_client_id(), oauth::ClientKind::Dcr, std::nullopt, {"https://a.example/cb"}, "web"};
  register_client(store(), *conn, used, meta());
  register_client(store(), *conn, idle, meta());
  // Registered just now: a use is not recorded again within the day.
  record_client_use(store(), *conn, used.client_id, meta());
  EXPECT_EQ(stream_length(*conn, oauth::client_stream(used.client_id)), 1);
  {
    pqxx::nontransaction txn(*conn);
    txn.exec("update oauth_clients set registered_at = now() - interval '31 days' where client_id in (" +
             quoted(used.client_id) + "," + quoted(idle.client_id) + ")");
  }
  record_client_use(store(), *conn, used.client_id, meta());
  record_client_use(store(), *conn, used.client_id, meta());
  EXPECT_EQ(stream_length(*conn, oauth::client_stream(used.client_id)), 2);
  record_client_use(store(), *conn, "dcr_unknown", meta());  // nothing to record
  EXPECT_EQ(stream_length(*conn, oauth::client_stream("dcr_unknown")), 0);

  expire_unused_clients(store(), *conn, now() - std::chrono::hours(24 * 30), 1000, meta());
  EXPECT_EQ(count(*conn, "select count(*) from oauth_clients where client_id = " + quoted(idle.client_id) +
                             " and deleted_at is not null"),
            1);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_clients where client_id = " + quoted(used.client_id) +
                             " and deleted_at is null"),
            1);
  // A deleted client's use is not recorded (it must register again).
  record_client_use(store(), *conn, idle.client_id, meta());
  EXPECT_EQ(stream_length(*conn, oauth::client_stream(idle.client_id)), 2);
  restore_registered_at(*conn, {used.client_id, idle.client_id});
}

TEST_F(OAuthCommands, ConsentGivenAndWithdrawnOnce) {
  auto conn = connect();
  const int64_t account = 9'000'000 + (std::hash<std::string>{}(unique("acct")) % 1'000'000);
  give_consent(store(), *conn, account, "dcr_x", meta());
  give_consent(store(), *conn, account, "dcr_x", meta());
  give_consent(store(), *conn, account, "dcr_y", meta());
  EXPECT_EQ(stream_length(*conn, oauth::consents_stream(account)), 2);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_consents where account_id = " + std::to_string(account)), 2);
  withdraw_consent(store(), *conn, account, "dcr_x", meta());
  withdraw_consent(store(), *conn, account, "dcr_x", meta());
  EXPECT_EQ(stream_length(*conn, oauth::consents_stream(account)), 3);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_consents where account_id = " + std::to_string(account) +
                             " and client_id = 'dcr_y'"),
            1);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_consents where account_id = " + std::to_string(account)), 1);
}

TEST_F(OAuthCommands, GrantsIssuedOnceRevokedOnceAndPerApp) {
  auto conn = connect();
  const int64_t account = 8'000'000 + (std::hash<std::string>{}(unique("acct")) % 1'000'000);
  const int64_t g1 = next_grant_id(*conn), g2 = next_grant_id(*conn), g3 = next_grant_id(*conn);
  EXPECT_LT(g1, g2);
  issue_grant(store(), *conn, g1, account, "dcr_app", {"https://s.example", "https://s.example/mcp"}, meta());
  EXPECT_THROW(issue_grant(store(), *conn, g1, account, "dcr_app", {"https://s.example"}, meta()),
               eventstore::ConcurrencyError);
  issue_grant(store(), *conn, g2, account, "dcr_app", {"https://s.example"}, meta());
  issue_grant(store(), *conn, g3, account, "dcr_other", {"https://s.example"}, meta());
  {
    pqxx::nontransaction txn(*conn);
    auto row = txn.exec_params1("select resources::text, revoked_at is null from oauth_grants where id = $1", g1);
    EXPECT_EQ(row[0].as<std::string>(), "{https://s.example,https://s.example/mcp}");
    EXPECT_TRUE(row[1].as<bool>());
  }
  EXPECT_TRUE(revoke_grant(store(), *conn, g1, "code_reuse", meta()));
  EXPECT_FALSE(revoke_grant(store(), *conn, g1, "user", meta()));
  EXPECT_FALSE(revoke_grant(store(), *conn, next_grant_id(*conn), "user", meta()));  // never issued
  {
    pqxx::read_transaction txn(*conn);
    auto events = eventstore::EventStore::read_stream(txn, oauth::grant_stream(g1));
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].type, events::kOAuthGrantRevoked);
    EXPECT_EQ(events[1].data.at("reason"), "code_reuse");
    EXPECT_EQ(events[1].data.at("account_id"), account);
  }
  give_consent(store(), *conn, account, "dcr_app", meta());
  // Disconnecting the app: its live grant (g2) and its consent; the other app keeps its own.
  EXPECT_EQ(revoke_client_for_account(store(), *conn, account, "dcr_app", meta()), 1);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_grants where account_id = " + std::to_string(account) +
                             " and revoked_at is null"),
            1);
  EXPECT_EQ(count(*conn, "select count(*) from oauth_consents where account_id = " + std::to_string(account)), 0);
}

}  // namespace
}  // namespace scribe::commands
