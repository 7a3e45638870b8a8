#include "api/console/console_files.h"

#include <gtest/gtest.h>

namespace scribe::api::console {
namespace {

TEST(ConsoleFiles, ConsolePathsAreAppAndBelowOnly) {
  EXPECT_TRUE(is_console_path("/app"));
  EXPECT_TRUE(is_console_path("/app/"));
  EXPECT_TRUE(is_console_path("/app/assets/main-ABC.js"));
  EXPECT_FALSE(is_console_path("/apps"));
  EXPECT_FALSE(is_console_path("/application"));
  EXPECT_FALSE(is_console_path("/api/v1/me"));
  EXPECT_FALSE(is_console_path(""));
}

TEST(ConsoleFiles, AssetNamesStayInsideTheAssetsFolder) {
  for (const char* ok : {"main-4F2KQ7ZB.js", "styles-AB12.css", "main-4F2KQ7ZB.js.map", "inter_latin.woff2", "a"})
    EXPECT_TRUE(is_safe_asset_name(ok)) << ok;
  for (const char* bad : {"", ".", "..", "../index.html", "..%2Fetc", "a/b.js", "a\\b.js", ".hidden.js", "a..js",
                          "x.js\n", "x y.js", "%2e%2e", "x.js?", "\xc3\xa9.js"})
    EXPECT_FALSE(is_safe_asset_name(bad)) << bad;
  EXPECT_TRUE(is_safe_asset_name(std::string(200, 'a')));
  EXPECT_FALSE(is_safe_asset_name(std::string(201, 'a')));
}

TEST(ConsoleFiles, ContentTypesByExtension) {
  EXPECT_EQ(asset_content_type("main-X.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(asset_content_type("worker-X.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(asset_content_type("pcm16k-X.worklet"), "text/javascript; charset=utf-8");
  EXPECT_EQ(asset_content_type("main-X.css"), "text/css; charset=utf-8");
  EXPECT_EQ(asset_content_type("main-X.js.map"), "application/json; charset=utf-8");
  EXPECT_EQ(asset_content_type("logo.svg"), "image/svg+xml");
  EXPECT_EQ(asset_content_type("shot.png"), "image/png");
  EXPECT_EQ(asset_content_type("font.woff2"), "font/woff2");
  EXPECT_EQ(asset_content_type("dsp.wasm"), "application/wasm");
  EXPECT_EQ(asset_content_type("data.json"), "application/json; charset=utf-8");
  EXPECT_EQ(asset_content_type("openapi.yaml"), "application/yaml; charset=utf-8");
  // Anything else is not served: no sniffing, no guessing.
  for (const char* other : {"index.html", "run.sh", "noext", "main.JS", "main.js.gz", "x."})
    EXPECT_EQ(asset_content_type(other), std::nullopt) << other;
}

TEST(ConsoleFiles, AcceptsGzipUnlessRefused) {
  EXPECT_TRUE(accepts_gzip("gzip"));
  EXPECT_TRUE(accepts_gzip("gzip, deflate, br, zstd"));  // Chromium's
  EXPECT_TRUE(accepts_gzip("GZIP;q=0.5"));
  EXPECT_TRUE(accepts_gzip("x-gzip"));
  EXPECT_TRUE(accepts_gzip("*"));
  EXPECT_FALSE(accepts_gzip(""));
  EXPECT_FALSE(accepts_gzip("identity"));
  EXPECT_FALSE(accepts_gzip("br, deflate"));
  EXPECT_FALSE(accepts_gzip("gzip;q=0"));
  EXPECT_FALSE(accepts_gzip("gzip; q=0.000"));
  EXPECT_FALSE(accepts_gzip("*, gzip;q=0"));  // named beats the wildcard
  EXPECT_FALSE(accepts_gzip("*;q=0"));
  EXPECT_TRUE(accepts_gzip("gzip;q=0.001"));
}

TEST(ConsoleFiles, ConfigNamesTheConsoleClientAndEndpointsOnTheBase) {
  const Json c = console_config("https://scribe.example.com", "Write to help@example.com");
  EXPECT_EQ(c, (Json{{"client_id", "scribe-console"},
                     {"redirect_uri", "https://scribe.example.com/app/callback"},
                     {"authorization_endpoint", "https://scribe.example.com/oauth/authorize"},
                     {"token_endpoint", "https://scribe.example.com/oauth/token"},
                     {"revocation_endpoint", "https://scribe.example.com/oauth/revoke"},
                     {"resource", "https://scribe.example.com"},
                     {"support", "Write to help@example.com"},
                     {"api_base", "https://scribe.example.com"}}));
}

TEST(ConsoleFiles, NotBuiltPageSaysHowToBuildAndEscapesTheFolder) {
  const std::string page = not_built_page("/srv/<console>&dist");
  EXPECT_NE(page.find("node build.mjs"), std::string::npos);
  EXPECT_NE(page.find("SCRIBE_CONSOLE_DIR"), std::string::npos);
  EXPECT_NE(page.find("/srv/&lt;console&gt;&amp;dist"), std::string::npos);
  EXPECT_EQ(page.find("<console>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace scribe::api::console
