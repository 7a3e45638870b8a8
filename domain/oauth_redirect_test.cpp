#include "domain/oauth_redirect.h"

#include <gtest/gtest.h>

namespace scribe::oauth {
namespace {

TEST(OAuthRedirect, Parses) {
  auto u = parse_redirect_uri("https://app.example:8443/cb/x?a=1");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "https");
  EXPECT_TRUE(u->has_authority);
  EXPECT_EQ(u->host, "app.example");
  EXPECT_EQ(u->port, "8443");
  EXPECT_EQ(u->path, "/cb/x");
  EXPECT_EQ(u->query, "a=1");
  auto v6 = parse_redirect_uri("http://[::1]:3000/cb");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "[::1]");
  EXPECT_EQ(v6->port, "3000");
  auto native = parse_redirect_uri("com.example.app:/oauth/cb");
  ASSERT_TRUE(native);
  EXPECT_FALSE(native->has_authority);
  EXPECT_EQ(native->path, "/oauth/cb");
  auto tricky = parse_redirect_uri("https://good.example@evil.example/cb");
  ASSERT_TRUE(tricky);
  EXPECT_TRUE(tricky->has_userinfo);
  EXPECT_EQ(tricky->host, "evil.example");
  for (const char* bad :
       {"", "/cb", "cb", "https://app.example:99999/cb", "https://app.example:8x/cb", "https://app .example/cb",
        "https://app.example/c\x01", "1https://a.example/", "https://[::1/cb"})
    EXPECT_FALSE(parse_redirect_uri(bad)) << bad;
}

TEST(OAuthRedirect, Registration) {
  for (const char* ok : {"https://app.example/cb", "https://app.example:8443/cb?x=1", "http://127.0.0.1/cb",
                         "http://127.0.0.1:3000/callback", "http://[::1]:3000/cb", "http://localhost:8080/cb",
                         "com.example.app:/oauth2redirect", "com.example.app://cb"})
    EXPECT_FALSE(redirect_registration_error(ok)) << ok;
  for (const char* bad :
       {"http://app.example/cb",        // http off loopback
        "https://app.example/cb#frag",  // fragment
        "https://user:pw@app.example/cb", "https://good.example@evil.example/cb", "http://127.0.0.1.evil.example/cb",
        "http://localhost.evil.example/cb",
        "http://127.0.0.2/cb",  // only the three loopback names
        "myapp:/cb",            // private-use scheme without a dot
        "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "https:///cb", "https:/cb", "not a uri"})
    EXPECT_TRUE(redirect_registration_error(bad)) << bad;
  EXPECT_TRUE(redirect_registration_error("https://app.example/" + std::string(3000, 'a')));
}

TEST(OAuthRedirect, ExactMatchOffLoopback) {
  const std::vector<std::string> reg{"https://app.example/cb", "com.example.app:/cb"};
  EXPECT_TRUE(redirect_matches(reg, "https://app.example/cb"));
  EXPECT_TRUE(redirect_matches(reg, "com.example.app:/cb"));
  for (const char* bad :
       {"https://app.example:8443/cb",  // other port on https
        "https://app.example:443/cb",   // even the default one, spelled out
        "https://app.example/cb/x",     // added path
        "https://app.example/cb/",      // trailing slash
        "https://app.example/CB",       // case
        "https://APP.example/cb", "HTTPS://app.example/cb",
        "https://app.example/cb?x=1",           // added query
        "https://app.example@evil.example/cb",  // userinfo trick
        "https://app.example/cb@evil.example",  // path containing @ is another path
        "https://evil.example/cb", "http://app.example/cb", "com.example.app:/cb2", "com.example.app://cb"})
    EXPECT_FALSE(redirect_matches(reg, bad)) << bad;
}

TEST(OAuthRedirect, LoopbackAnyPort) {
  const std::vector<std::string> reg{"http://127.0.0.1/callback", "http://localhost:3000/cb"};
  EXPECT_TRUE(redirect_matches(reg, "http://127.0.0.1/callback"));
  EXPECT_TRUE(redirect_matches(reg, "http://127.0.0.1:49152/callback"));
  EXPECT_TRUE(redirect_matches(reg, "http://localhost:3000/cb"));
  EXPECT_TRUE(redirect_matches(reg, "http://localhost:3001/cb"));
  EXPECT_TRUE(redirect_matches(reg, "http://localhost/cb"));
  for (const char* bad : {"http://127.0.0.1:49152/callback/x",  // path still exact
                          "http://127.0.0.1:49152/Callback",    // case of the path
                          "http://localhost:3000/callback",     // host is part of the match
                          "http://[::1]:3000/cb",
                          "https://127.0.0.1/callback",  // scheme too
                          "http://127.0.0.1:49152/callback?x=1", "http://user@127.0.0.1:49152/callback",
                          "http://127.0.0.1:49152@evil.example/callback", "http://127.0.0.1:99999/callback",
                          "http://127.0.0.1:/callback#x"})
    EXPECT_FALSE(redirect_matches(reg, bad)) << bad;
  // A loopback https registration is matched exactly (only http gets the port rule).
  EXPECT_FALSE(redirect_matches({"https://127.0.0.1:3000/cb"}, "https://127.0.0.1:3001/cb"));
}

TEST(OAuthRedirect, LoopbackOnlyAndDisplay) {
  EXPECT_TRUE(all_loopback({"http://127.0.0.1:3000/cb", "http://localhost/cb", "http://[::1]/cb"}));
  EXPECT_FALSE(all_loopback({"http://127.0.0.1:3000/cb", "https://app.example/cb"}));
  EXPECT_FALSE(all_loopback({"com.example.app:/cb"}));
  EXPECT_FALSE(all_loopback({}));
  EXPECT_EQ(redirect_display_host("https://app.example:8443/cb"), "app.example");
  EXPECT_EQ(redirect_display_host("http://127.0.0.1:3000/cb"), "127.0.0.1");
  EXPECT_EQ(redirect_display_host("com.example.app:/cb"), "com.example.app");
  EXPECT_EQ(redirect_csp_source("https://app.example:8443/cb?x"), "https://app.example:8443");
  EXPECT_EQ(redirect_csp_source("http://[::1]:3000/cb"), "http://[::1]:3000");
  EXPECT_EQ(redirect_csp_source("com.example.app:/cb"), "com.example.app:");
}

}  // namespace
}  // namespace scribe::oauth
