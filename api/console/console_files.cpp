#include "api/console/console_files.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/text.h"
#include "domain/oauth.h"

namespace scribe::api::console {
namespace {

// Types of what an esbuild build emits (scripts, styles, their source maps,
// images and fonts it copies) and of the documents the docs page may load.
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kTypes{{
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    // An AudioWorklet module, copied by esbuild's file loader under its own
    // extension and loaded by URL: a script, which browsers check the type of.
    {"worklet", "text/javascript; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"map", "application/json; charset=utf-8"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"woff2", "font/woff2"},
    {"wasm", "application/wasm"},
    {"json", "application/json; charset=utf-8"},
    {"yaml", "application/yaml; charset=utf-8"},
}};

constexpr std::size_t kMaxAssetName = 200;

}  // namespace

bool is_console_path(std::string_view path) { return path == "/app" || path.rfind("/app/", 0) == 0; }

bool is_safe_asset_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxAssetName || name.front() == '.') return false;
  for (char c : name) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!plain) return false;
  }
  return name.find("..") == std::string_view::npos;
}

std::optional<std::string> asset_content_type(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto ext = name.substr(dot + 1);
  for (const auto& [e, type] : kTypes)
    if (e == ext) return std::string(type);
  return std::nullopt;
}

bool accepts_gzip(std::string_view header) {
  bool gzip = false, star = false, gzip_named = false;
  for (const auto& item : split_list(header, EmptyItems::kDrop)) {
    const auto semi = item.find(';');
    std::string coding = to_lower(trim(item.substr(0, semi)));
    bool zero = false;
    if (semi != std::string::npos) {
      std::string params = to_lower(item.substr(semi + 1));
      params.erase(std::remove_if(params.begin(), params.end(), [](char c) { return c == ' ' || c == '\t'; }),
                   params.end());
      // q=0, q=0., q=0.0, q=0.00, q=0.000: refused.
      if (params.rfind("q=0", 0) == 0 && params.find_first_not_of("0.", 3) == std::string::npos) zero = true;
    }
    if (coding == "gzip" || coding == "x-gzip") {
      gzip_named = true;
      gzip = !zero;
    } else if (coding == "*") {
      star = !zero;
    }
  }
  return gzip_named ? gzip : star;
}

Json console_config(const std::string& base, const std::string& support_text) {
  return {{"client_id", std::string(scribe::oauth::kConsoleClientId)},
          {"redirect_uri", scribe::oauth::console_redirect_uri(base)},
          {"authorization_endpoint", base + "/oauth/authorize"},
          {"token_endpoint", base + "/oauth/token"},
          {"revocation_endpoint", base + "/oauth/revoke"},
          {"resource", scribe::oauth::resource_uri(base, scribe::oauth::Audience::Rest)},
          {"support", support_text},
          {"api_base", base}};
}

std::string not_built_page(const std::string& console_dir) {
  const std::string dir = html_escape(console_dir);
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<title>Web console not built</title></head><body>\n"
         "<h1>The web console is not built</h1>\n"
         "<p>This server serves the console from <code>" +
         dir +
         "</code>, which has no <code>index.html</code>. Build it from the source tree:</p>\n"
         "<pre>cd console &amp;&amp; npm ci --no-audit --no-fund &amp;&amp; node build.mjs</pre>\n"
         "<p><code>bash scripts/run.sh</code> builds it too. Or point <code>SCRIBE_CONSOLE_DIR</code> at a "
         "folder holding a build, and reload this page. The API under <code>/api/v1</code> works without it.</p>\n"
         "</body></html>\n";
}

}  // namespace scribe::api::console
