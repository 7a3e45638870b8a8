#include "api/mcp/mcp_origins.h"

#include <gtest/gtest.h>

namespace scribe::api::mcp {
namespace {

Config loopback(uint16_t port) {
  Config c;
  c.listen_host = "127.0.0.1";
  c.listen_port = port;
  c.public_url = "http://127.0.0.1:" + std::to_string(port);
  return c;
}

TEST(McpOrigins, CanonicalFormIsTheBrowsersSerialization) {
  EXPECT_EQ(canonical_origin("http://localhost:8080"), "http://localhost:8080");
  EXPECT_EQ(canonical_origin("HTTPS://Console.Example"), "https://console.example");
  EXPECT_EQ(canonical_origin("https://console.example:443"), "https://console.example");
  EXPECT_EQ(canonical_origin("http://console.example:80"), "http://console.example");
  EXPECT_EQ(canonical_origin("http://[::1]:8080"), "http://[::1]:8080");
  for (const char* bad : {"null", "", "console.example", "ftp://console.example", "https://console.example/",
                          "https://console.example/app", "https://user@console.example", "https://", "http://x:99999"})
    EXPECT_EQ(canonical_origin(bad), std::nullopt) << bad;
}

TEST(McpOrigins, ALoopbackListenerAllowsItsOwnOriginUnderEachLoopbackName) {
  const Config c = loopback(8080);
  EXPECT_EQ(allowed_origins(c),
            (std::vector<std::string>{"http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"}));
  for (const char* ok :
       {"http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080", "http://LOCALHOST:8080"})
    EXPECT_TRUE(origin_allowed(c, ok)) << ok;
  for (const char* no : {"http://localhost:8081", "https://localhost:8080", "http://localhost",
                         "http://evil.example:8080", "null", "http://localhost:8080/"})
    EXPECT_FALSE(origin_allowed(c, no)) << no;
}

TEST(McpOrigins, PublicUrlListenHostAndConfiguredOriginsAreAddedNothingElse) {
  Config c;
  c.listen_host = "10.0.0.5";
  c.listen_port = 9000;
  c.public_url = "https://scribe.example:443/base";
  c.mcp_allowed_origins = {"https://console.example", "http://tools.example:3000"};
  EXPECT_EQ(allowed_origins(c), (std::vector<std::string>{"http://10.0.0.5:9000", "https://scribe.example",
                                                          "https://console.example", "http://tools.example:3000"}));
  // Not on loopback: the loopback names are not this server's origin.
  EXPECT_FALSE(origin_allowed(c, "http://localhost:9000"));
  EXPECT_TRUE(origin_allowed(c, "https://scribe.example"));
  EXPECT_TRUE(origin_allowed(c, "http://tools.example:3000"));
  EXPECT_FALSE(origin_allowed(c, "http://tools.example"));

  // A wildcard listener listens on loopback too.
  Config any = loopback(7000);
  any.listen_host = "0.0.0.0";
  EXPECT_TRUE(origin_allowed(any, "http://localhost:7000"));
  Config v6 = loopback(7000);
  v6.listen_host = "::1";
  EXPECT_TRUE(origin_allowed(v6, "http://[::1]:7000"));
  EXPECT_TRUE(origin_allowed(v6, "http://localhost:7000"));
}

}  // namespace
}  // namespace scribe::api::mcp
