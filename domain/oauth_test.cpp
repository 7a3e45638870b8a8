#include "domain/oauth.h"

#include <gtest/gtest.h>

#include "domain/events.h"

namespace scribe::oauth {
namespace {

const std::string kBase = "https://scribe.example";

TEST(OAuthTokens, FormatsAndHashing) {
  const auto access = generate_access_token();
  const auto refresh = generate_refresh_token();
  EXPECT_EQ(access.size(), 4 + kTokenSecretChars);
  EXPECT_TRUE(is_access_token(access));
  EXPECT_FALSE(is_refresh_token(access));
  EXPECT_TRUE(is_refresh_token(refresh));
  EXPECT_FALSE(is_access_token(refresh));
  EXPECT_NE(access, generate_access_token());
  EXPECT_FALSE(is_access_token("sat_short"));
  EXPECT_FALSE(is_access_token("sat_" + std::string(42, 'a') + "="));
  EXPECT_FALSE(is_access_token("key_live_" + std::string(40, 'a')));
  EXPECT_EQ(generate_code().size(), 43u);
  EXPECT_EQ(generate_dcr_client_id().substr(0, 4), "dcr_");
  EXPECT_EQ(hash_secret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(OAuthResources, AcceptedWhereBound) {
  EXPECT_EQ(resource_uri(kBase, Audience::Rest), kBase);
  EXPECT_EQ(resource_uri(kBase, Audience::Mcp), kBase + "/mcp");
  const std::vector<std::string> rest{kBase}, mcp{kBase + "/mcp"}, both{kBase, kBase + "/mcp"};
  EXPECT_TRUE(accepts(rest, kBase, Audience::Rest));
  EXPECT_FALSE(accepts(rest, kBase, Audience::Mcp));
  EXPECT_TRUE(accepts(mcp, kBase, Audience::Mcp));
  EXPECT_FALSE(accepts(mcp, kBase, Audience::Rest));
  EXPECT_TRUE(accepts(both, kBase, Audience::Rest));
  EXPECT_TRUE(accepts(both, kBase, Audience::Mcp));
  EXPECT_FALSE(accepts({"https://other.example"}, kBase, Audience::Rest));
}

TEST(OAuthResources, DefaultSubsetAndInvalidTarget) {
  const auto defaults = default_resources(kBase);
  EXPECT_EQ(defaults, std::vector<std::string>{kBase});
  // Nothing requested: the fallback.
  EXPECT_EQ(resolve_resources(kBase, {}, defaults), defaults);
  // Both, duplicates collapsed, order kept.
  auto both = resolve_resources(kBase, {kBase + "/mcp", kBase, kBase + "/mcp"}, defaults);
  ASSERT_TRUE(both);
  EXPECT_EQ(*both, (std::vector<std::string>{kBase + "/mcp", kBase}));
  // {base}/ is {base}.
  EXPECT_EQ(resolve_resources(kBase, {kBase + "/"}, {}), std::vector<std::string>{kBase});
  // Anything else is invalid_target: another host, another path, a trailing slash on /mcp, case.
  for (const std::string& bad :
       std::vector<std::string>{"https://other.example", kBase + "/mcp/", kBase + "/api/v1", kBase + "/MCP",
                                std::string("HTTPS://scribe.example"), std::string("")})
    EXPECT_FALSE(resolve_resources(kBase, {bad}, defaults)) << bad;
  // Narrowing within what a code or grant holds; never widening.
  const std::vector<std::string> granted{kBase + "/mcp"};
  EXPECT_EQ(resolve_resources(kBase, {}, granted, &granted), granted);
  EXPECT_EQ(resolve_resources(kBase, {kBase + "/mcp"}, granted, &granted), granted);
  EXPECT_FALSE(resolve_resources(kBase, {kBase}, granted, &granted));
  const std::vector<std::string> all{kBase, kBase + "/mcp"};
  EXPECT_EQ(resolve_resources(kBase, {kBase}, all, &all), std::vector<std::string>{kBase});
}

eventstore::RecordedEvent recorded(const eventstore::NewEvent& e, int64_t version) {
  eventstore::RecordedEvent r;
  r.type = e.type;
  r.data = e.data;
  r.version = version;
  return r;
}

TEST(OAuthGrant, RevokedOnceOnlyWhenIssued) {
  EXPECT_TRUE(revoke_grant(fold_grant({}), 7, "user").empty());
  const auto issued = grant_issued(7, 3, "dcr_x", {kBase});
  auto g = fold_grant({recorded(issued, 1)});
  EXPECT_TRUE(g.issued);
  EXPECT_EQ(g.account_id, 3);
  EXPECT_EQ(g.version, 1);
  auto revoke = revoke_grant(g, 7, "code_reuse");
  ASSERT_EQ(revoke.size(), 1u);
  EXPECT_EQ(revoke[0].type, events::kOAuthGrantRevoked);
  EXPECT_EQ(revoke[0].data.at("reason"), "code_reuse");
  g = fold_grant({recorded(issued, 1), recorded(revoke[0], 2)});
  EXPECT_TRUE(g.revoked);
  EXPECT_TRUE(revoke_grant(g, 7, "user").empty());
}

TEST(OAuthConsent, GivenOnceWithdrawnOnce) {
  auto s = fold_consents({});
  auto given = give_consent(s, 3, "dcr_a");
  ASSERT_EQ(given.size(), 1u);
  s = fold_consents({recorded(given[0], 1)});
  EXPECT_TRUE(give_consent(s, 3, "dcr_a").empty());
  EXPECT_TRUE(withdraw_consent(s, 3, "dcr_b").empty());
  auto withdrawn = withdraw_consent(s, 3, "dcr_a");
  ASSERT_EQ(withdrawn.size(), 1u);
  s = fold_consents({recorded(given[0], 1), recorded(withdrawn[0], 2)});
  EXPECT_TRUE(s.clients.empty());
  EXPECT_EQ(s.version, 2);
}

}  // namespace
}  // namespace scribe::oauth
