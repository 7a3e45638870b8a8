// Access tokens against their rows (migrations/060_oauth.sql): what the
// verifier accepts and refuses, and the authenticator around it (the cache of
// tokens a handler checks itself, unknown tokens refused from memory).
#include "api/oauth/token_verifier.h"

#include <gtest/gtest.h>

#include "commands/account_commands.h"
#include "common/error.h"
#include "domain/oauth.h"
#include "tests/bearer_request.h"
#include "tests/pg_fixture.h"

namespace scribe::api::oauth {
namespace {

using testing::bearer_request;
const std::string kBase = "https://scribe.example";

class TokenVerifierTest : public testing::PgTest {
 protected:
  void SetUp() override {
    conn_ = connect();
    account_ =
        commands::open_account(store(), *conn_, unique("oauthrs") + "@example.com", plans::Tier::Free, {"test", ""});
  }

  // A grant issued through its event (the inline projection writes
  // oauth_grants), as the token endpoint issues one.
  int64_t grant(const std::string& client_id, const std::vector<std::string>& resources) {
    // The id before the transaction: an append must be its transaction's first write.
    const int64_t id = pqxx::nontransaction(*conn_).exec1("select nextval('oauth_grant_ids')")[0].as<int64_t>();
    pqxx::work txn(*conn_);
    store().append(txn, scribe::oauth::grant_stream(id), eventstore::ExpectedVersion::no_stream(),
                   {scribe::oauth::grant_issued(id, account_, client_id, resources)});
    txn.commit();
    return id;
  }
  void revoke_grant(int64_t id, const std::string& client_id) {
    pqxx::work txn(*conn_);
    store().append(txn, scribe::oauth::grant_stream(id), eventstore::ExpectedVersion::any(),
                   {scribe::oauth::grant_revoked(id, account_, client_id, "user")});
    txn.commit();
  }
  // A token row as the token endpoint stores it: its SHA-256 only.
  std::string token(int64_t grant_id, const std::string& client_id, const std::vector<std::string>& resources,
                    const std::string& kind = "access", int ttl_seconds = 3600) {
    const std::string t =
        kind == "access" ? scribe::oauth::generate_access_token() : scribe::oauth::generate_refresh_token();
    pqxx::nontransaction txn(*conn_);
    txn.exec_params(
        "insert into oauth_tokens(token_hash, kind, grant_id, account_id, client_id, resources, expires_at) "
        "values ($1, $2, $3, $4, $5, $6::text[], now() + make_interval(secs => $7))",
        scribe::oauth::hash_secret(t), kind, grant_id, account_, client_id, db::text_array_literal(resources),
        ttl_seconds);
    return t;
  }
  void exec(const std::string& sql) { pqxx::nontransaction(*conn_).exec(sql); }

  std::optional<Principal> verify(TokenVerifier& v, const std::string& t) {
    pqxx::nontransaction txn(*conn_);
    return v.verify(txn, t);
  }
  // The refusal's message ("" when verify did not throw).
  std::string refusal(TokenVerifier& v, const std::string& t) {
    try {
      verify(v, t);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), "unauthenticated");
      return e.message();
    }
    return "";
  }

  std::unique_ptr<pqxx::connection> conn_;
  int64_t account_ = 0;
};

TEST_F(TokenVerifierTest, AValidAccessTokenIsItsAccountClientAndResources) {
  TokenVerifier v;
  const auto g = grant("dcr_verifier", {kBase, kBase + "/mcp"});
  const auto t = token(g, "dcr_verifier", {kBase, kBase + "/mcp"});
  auto p = verify(v, t);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, Principal::Kind::OAuth);
  EXPECT_EQ(p->account_id, account_);
  EXPECT_EQ(p->oauth_client_id, "dcr_verifier");
  EXPECT_FALSE(p->first_party);
  EXPECT_EQ(p->resources, (std::vector<std::string>{kBase, kBase + "/mcp"}));
  EXPECT_EQ(p->permission, apikey::Permission::Full);
  EXPECT_TRUE(p->expires_at);
  EXPECT_EQ(p->digest, scribe::oauth::hash_secret(t));
  EXPECT_EQ(p->rate_bucket(), "user:" + std::to_string(account_));
  EXPECT_EQ(p->idempotency_principal(), "user:" + std::to_string(account_) + "/client:dcr_verifier");
  EXPECT_EQ(v.lookups(), 1u);
}

TEST_F(TokenVerifierTest, TheConsoleClientsTokensAreFirstParty) {
  TokenVerifier v;
  const std::string console(scribe::oauth::kConsoleClientId);
  const auto t = token(grant(console, {kBase}), console, {kBase});
  auto p = verify(v, t);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->first_party);
}

TEST_F(TokenVerifierTest, RevokedExpiredUnknownAndRefreshTokensAreRefused) {
  TokenVerifier v;
  const auto g = grant("dcr_refused", {kBase});
  const auto revoked = token(g, "dcr_refused", {kBase});
  exec("update oauth_tokens set revoked_at = now() where token_hash = '" + scribe::oauth::hash_secret(revoked) + "'");
  EXPECT_NE(refusal(v, revoked).find("revoked"), std::string::npos);
  const auto expired = token(g, "dcr_refused", {kBase}, "access", -1);
  EXPECT_NE(refusal(v, expired).find("expired"), std::string::npos);
  // Unknown: nullopt, which the authenticator turns into its 401.
  EXPECT_FALSE(verify(v, scribe::oauth::generate_access_token()));
  const auto before = v.lookups();
  // A refresh token is no Bearer credential, even one with a row.
  const auto refresh = token(g, "dcr_refused", {kBase}, "refresh");
  EXPECT_NE(refusal(v, refresh).find("refresh token"), std::string::npos);
  // Not the shape of a token this server issues: refused without a lookup.
  EXPECT_NE(refusal(v, "sat_short"), "");
  EXPECT_NE(refusal(v, "an-opaque-token"), "");
  EXPECT_EQ(v.lookups(), before);
}

TEST_F(TokenVerifierTest, RevokingTheGrantEndsEveryTokenOfIt) {
  TokenVerifier v;
  const auto g = grant("dcr_grant", {kBase});
  const auto a = token(g, "dcr_grant", {kBase});
  const auto b = token(g, "dcr_grant", {kBase});
  ASSERT_TRUE(verify(v, a));
  revoke_grant(g, "dcr_grant");
  EXPECT_NE(refusal(v, a).find("revoked"), std::string::npos);
  EXPECT_NE(refusal(v, b).find("revoked"), std::string::npos);
}

TEST_F(TokenVerifierTest, TheAuthenticatorCachesAVerifiedTokenAndRefusesAnUnknownOneFromMemory) {
  TokenVerifier v;
  Authenticator auth(&v);
  const auto g = grant("dcr_cache", {kBase});
  const auto t = token(g, "dcr_cache", {kBase});
  const auto req = bearer_request(t, "198.51.100.7");
  EXPECT_FALSE(auth.cached(req));
  {
    pqxx::nontransaction txn(*conn_);
    EXPECT_EQ(auth.authenticate(txn, req).oauth_client_id, "dcr_cache");
  }
  // Cached for a handler that checks the token in its own statement.
  auto cached = auth.cached(req);
  ASSERT_TRUE(cached);
  EXPECT_FALSE(cached->verified);
  EXPECT_EQ(cached->resources, std::vector<std::string>{kBase});
  // ... which refuses it once it is revoked, as verify() does.
  EXPECT_NO_THROW(TokenVerifier::check(*cached, true, cached->digest, false, false));
  EXPECT_THROW(TokenVerifier::check(*cached, true, cached->digest, true, false), Error);
  EXPECT_THROW(TokenVerifier::check(*cached, true, "0" + cached->digest.substr(1), false, false), Error);
  EXPECT_THROW(TokenVerifier::check(*cached, false, "", false, false), Error);
  // A 401 forgets it.
  auth.record_failure(req);
  EXPECT_FALSE(auth.cached(req));

  // An unknown token costs one lookup, then is refused from memory.
  const auto unknown = bearer_request(scribe::oauth::generate_access_token(), "198.51.100.8");
  auth.screen(unknown);
  {
    pqxx::nontransaction txn(*conn_);
    EXPECT_THROW(auth.authenticate(txn, unknown), Error);
  }
  const auto lookups = v.lookups();
  try {
    auth.screen(unknown);
    FAIL() << "the unknown token passed the screen again";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "unauthenticated");
  }
  EXPECT_EQ(v.lookups(), lookups);
}

}  // namespace
}  // namespace scribe::api::oauth
