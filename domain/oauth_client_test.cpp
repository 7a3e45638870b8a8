#include "domain/oauth_client.h"

#include <gtest/gtest.h>

namespace scribe::oauth {
namespace {

const MetadataError* error_of(const MetadataResult& r) { return std::get_if<MetadataError>(&r); }
const ClientMetadata* ok_of(const MetadataResult& r) { return std::get_if<ClientMetadata>(&r); }

TEST(OAuthClientMetadata, RegistrationDefaults) {
  auto r = check_registration({{"redirect_uris", {"http://127.0.0.1:3000/cb"}}});
  ASSERT_TRUE(ok_of(r)) << error_of(r)->description;
  const auto& m = *ok_of(r);
  EXPECT_EQ(m.grant_types, (std::vector<std::string>{"authorization_code", "refresh_token"}));
  EXPECT_EQ(m.response_types, std::vector<std::string>{"code"});
  EXPECT_EQ(m.application_type, "web");
  EXPECT_FALSE(m.client_name);
  const Json j = m.to_json();
  EXPECT_EQ(j.at("token_endpoint_auth_method"), "none");
  EXPECT_EQ(j.at("redirect_uris"), Json::array({"http://127.0.0.1:3000/cb"}));
  EXPECT_FALSE(j.contains("client_name"));
}

TEST(OAuthClientMetadata, RegistrationAsTheSdkSendsIt) {
  // What @modelcontextprotocol/sdk's registerClient posts (clientMetadata plus scope).
  Json body = {{"client_name", "Claude"},
               {"redirect_uris", {"http://localhost:6274/oauth/callback"}},
               {"grant_types", {"authorization_code", "refresh_token"}},
               {"response_types", {"code"}},
               {"token_endpoint_auth_method", "none"},
               {"client_uri", "https://claude.ai"},
               {"logo_uri", ""},
               {"scope", "transcribe"},
               {"software_id", "x"}};
  auto r = check_registration(body);
  ASSERT_TRUE(ok_of(r)) << error_of(r)->description;
  EXPECT_EQ(ok_of(r)->client_name, "Claude");
  EXPECT_EQ(ok_of(r)->scope, "transcribe");
  EXPECT_EQ(ok_of(r)->to_json().at("client_name"), "Claude");
}

TEST(OAuthClientMetadata, RegistrationRefusals) {
  struct Case {
    Json body;
    std::string error;
  };
  const Json uris = {"https://app.example/cb"};
  const std::vector<Case> cases = {
      {Json::array(), "invalid_client_metadata"},
      {Json::object(), "invalid_redirect_uri"},
      {{{"redirect_uris", Json::array()}}, "invalid_redirect_uri"},
      {{{"redirect_uris", "https://app.example/cb"}}, "invalid_redirect_uri"},
      {{{"redirect_uris", {1}}}, "invalid_redirect_uri"},
      {{{"redirect_uris", {"http://app.example/cb"}}}, "invalid_redirect_uri"},
      {{{"redirect_uris", {"https://app.example/cb#x"}}}, "invalid_redirect_uri"},
      {{{"redirect_uris", std::vector<std::string>(11, "https://app.example/cb")}}, "invalid_redirect_uri"},
      {{{"redirect_uris", uris}, {"token_endpoint_auth_method", "client_secret_basic"}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"token_endpoint_auth_method", "private_key_jwt"}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"grant_types", {"client_credentials"}}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"grant_types", {"refresh_token"}}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"grant_types", {"implicit", "authorization_code"}}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"response_types", {"token"}}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"application_type", "desktop"}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"client_name", 5}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"client_name", std::string(201, 'a')}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"client_name", "a\nb"}}, "invalid_client_metadata"},
      {{{"redirect_uris", uris}, {"scope", 1}}, "invalid_client_metadata"},
  };
  for (const auto& c : cases) {
    auto r = check_registration(c.body);
    ASSERT_TRUE(error_of(r)) << c.body.dump();
    EXPECT_EQ(error_of(r)->error, c.error) << c.body.dump();
    EXPECT_FALSE(error_of(r)->description.empty());
  }
  // A name of 200 code points (more bytes) is fine.
  std::string name;
  for (int i = 0; i < 200; ++i) name += "\xc3\xa9";
  EXPECT_TRUE(ok_of(check_registration({{"redirect_uris", uris}, {"client_name", name}})));
}

TEST(OAuthClientMetadata, MetadataDocumentUrl) {
  EXPECT_TRUE(is_metadata_document_url("https://app.example/oauth/client.json"));
  EXPECT_TRUE(is_metadata_document_url("https://app.example:8443/c?v=1"));
  for (const char* bad : {"https://app.example", "https://app.example/", "http://app.example/client.json",
                          "https://u@app.example/client.json", "https://app.example/client.json#x",
                          "https://app.example/a/../client.json", "https://app.example/./client.json", "dcr_abc",
                          "scribe-console", "https:///client.json"})
    EXPECT_FALSE(is_metadata_document_url(bad)) << bad;
  EXPECT_FALSE(is_metadata_document_url("https://app.example/" + std::string(3000, 'a')));
}

TEST(OAuthClientMetadata, Document) {
  const std::string url = "https://app.example/oauth/client.json";
  Json doc = {{"client_id", url},
              {"client_name", "Example MCP Client"},
              {"redirect_uris", {"http://127.0.0.1:3000/callback", "http://localhost:3000/callback"}},
              {"grant_types", {"authorization_code"}},
              {"response_types", {"code"}},
              {"token_endpoint_auth_method", "none"}};
  auto r = check_metadata_document(doc, url);
  ASSERT_TRUE(ok_of(r)) << error_of(r)->description;
  EXPECT_EQ(ok_of(r)->client_name, "Example MCP Client");
  // client_id must equal the URL exactly.
  for (const std::string& other : {url + "x", std::string("https://APP.example/oauth/client.json"),
                                   std::string("https://evil.example/oauth/client.json")}) {
    Json d = doc;
    d["client_id"] = other;
    auto e = check_metadata_document(d, url);
    ASSERT_TRUE(error_of(e)) << other;
    EXPECT_EQ(error_of(e)->error, "invalid_client_metadata");
  }
  Json d = doc;
  d.erase("client_id");
  EXPECT_TRUE(error_of(check_metadata_document(d, url)));
  d = doc;
  d["client_secret"] = "s";
  EXPECT_TRUE(error_of(check_metadata_document(d, url)));
  d = doc;
  d["token_endpoint_auth_method"] = "private_key_jwt";
  EXPECT_TRUE(error_of(check_metadata_document(d, url)));
  d = doc;
  d["redirect_uris"] = {"http://evil.example/cb"};
  EXPECT_EQ(error_of(check_metadata_document(d, url))->error, "invalid_redirect_uri");
}

TEST(OAuthClientMetadata, CacheLifetime) {
  EXPECT_EQ(cache_seconds(""), 3600);
  EXPECT_EQ(cache_seconds("public, max-age=600"), 600);
  EXPECT_EQ(cache_seconds("Max-Age=7200, public"), 7200);
  EXPECT_EQ(cache_seconds("max-age=5"), 60);
  EXPECT_EQ(cache_seconds("max-age=0"), 60);
  EXPECT_EQ(cache_seconds("max-age=99999999999"), 86400);
  EXPECT_EQ(cache_seconds("no-store"), 60);
  EXPECT_EQ(cache_seconds("max-age=600, no-cache"), 60);
  EXPECT_EQ(cache_seconds("max-age=abc"), 3600);
}

}  // namespace
}  // namespace scribe::oauth
