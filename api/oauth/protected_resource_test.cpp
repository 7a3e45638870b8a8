// The resource side's pure rules: which resource a path belongs to, the
// metadata documents, the 401 challenge, and the audience check.
#include "api/oauth/protected_resource.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace scribe::api::oauth {
namespace {

using scribe::oauth::Audience;
const std::string kBase = "https://scribe.example";

TEST(OAuthResource, McpAndBelowIsTheMcpAudienceEverythingElseRest) {
  EXPECT_EQ(audience_of("/mcp"), Audience::Mcp);
  EXPECT_EQ(audience_of("/mcp/server-card"), Audience::Mcp);
  EXPECT_EQ(audience_of("/mcpx"), Audience::Rest);
  EXPECT_EQ(audience_of("/api/v1/me"), Audience::Rest);
  EXPECT_EQ(audience_of("/v1/models"), Audience::Rest);
  EXPECT_EQ(audience_of("/dashboard/api/v1/keys"), Audience::Rest);
}

TEST(OAuthResource, MetadataNamesTheResourceAndTheIssuer) {
  EXPECT_EQ(metadata_url(kBase, Audience::Rest), kBase + "/.well-known/oauth-protected-resource");
  EXPECT_EQ(metadata_url(kBase, Audience::Mcp), kBase + "/.well-known/oauth-protected-resource/mcp");
  const Json mcp = metadata(kBase, Audience::Mcp);
  EXPECT_EQ(mcp["resource"], kBase + "/mcp");
  EXPECT_EQ(mcp["authorization_servers"], Json::array({kBase}));
  EXPECT_EQ(mcp["bearer_methods_supported"], Json::array({"header"}));
  EXPECT_EQ(mcp["scopes_supported"], Json::array({"transcribe"}));
  EXPECT_TRUE(mcp["resource_name"].is_string());
  const Json rest = metadata(kBase, Audience::Rest);
  EXPECT_EQ(rest["resource"], kBase);
  EXPECT_EQ(rest["authorization_servers"], mcp["authorization_servers"]);
}

TEST(OAuthResource, TheChallengePointsAtThePathsMetadataAndSaysWhenATokenFailed) {
  EXPECT_EQ(bearer_challenge(kBase, "/mcp", false),
            "Bearer resource_metadata=\"https://scribe.example/.well-known/oauth-protected-resource/mcp\"");
  EXPECT_EQ(bearer_challenge(kBase, "/api/v1/me", true),
            "Bearer resource_metadata=\"https://scribe.example/.well-known/oauth-protected-resource\", "
            "error=\"invalid_token\"");
  EXPECT_TRUE(presents_bearer_token("Bearer sat_x"));
  EXPECT_TRUE(presents_bearer_token("bearer key_live_x"));
  EXPECT_FALSE(presents_bearer_token(""));
  EXPECT_FALSE(presents_bearer_token("Bearer   "));
  EXPECT_FALSE(presents_bearer_token("Basic dXNlcjpwYXNz"));
}

Principal oauth_principal(std::vector<std::string> resources) {
  Principal p;
  p.kind = Principal::Kind::OAuth;
  p.account_id = 7;
  p.oauth_client_id = "dcr_x";
  p.resources = std::move(resources);
  return p;
}

std::string refusal(const Principal& p, const std::string& path) {
  try {
    check_audience(p, kBase, path);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "unauthenticated");
    EXPECT_EQ(e.http_status(), 401);
    return e.message();
  }
  return "";
}

TEST(OAuthResource, ATokenIsAcceptedOnlyWhereItsResourceIsServed) {
  const auto rest = oauth_principal({kBase});
  const auto mcp = oauth_principal({kBase + "/mcp"});
  const auto both = oauth_principal({kBase, kBase + "/mcp"});
  EXPECT_EQ(refusal(rest, "/api/v1/me"), "");
  EXPECT_EQ(refusal(rest, "/v1/models"), "");
  EXPECT_NE(refusal(rest, "/mcp").find("wrong audience"), std::string::npos);
  EXPECT_EQ(refusal(mcp, "/mcp"), "");
  EXPECT_NE(refusal(mcp, "/api/v1/me").find("wrong audience"), std::string::npos);
  EXPECT_NE(refusal(mcp, "/v1/models"), "");
  EXPECT_EQ(refusal(both, "/mcp"), "");
  EXPECT_EQ(refusal(both, "/api/v1/me"), "");
  // Another server's resource, or none, is accepted nowhere.
  EXPECT_NE(refusal(oauth_principal({"https://other.example"}), "/api/v1/me"), "");
  EXPECT_NE(refusal(oauth_principal({}), "/api/v1/me"), "");
  // API keys are for every route.
  Principal key;
  key.key_id = 1;
  EXPECT_EQ(refusal(key, "/mcp"), "");
}

}  // namespace
}  // namespace scribe::api::oauth
