#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "common/json.h"

// The pure decisions of serving the web console (api/console/console.h):
// which asset names may be served, with what content type, which paths are
// the console's, and its /app/config.json document. Unit tests:
// console_files_test.cpp.
namespace scribe::api::console {

// Every response under /app carries these (ApiApp::finish): the console's
// scripts and styles come from its own files only (no inline script or
// style, no eval), nothing may frame it, and it leaks no URL to other sites.
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "
    "connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; "
    "object-src 'none'";

// Whether `path` (percent-decoded) is the console's: /app or under /app/.
bool is_console_path(std::string_view path);

// Whether `name` may name a file of the build's assets/ folder: 1 to 200
// characters of letters, digits, '.', '-' and '_', not starting with '.'
// (no "..", no hidden files, no path separators: nothing outside assets/).
bool is_safe_asset_name(std::string_view name);

// The Content-Type an asset is served with, by its extension (js, mjs,
// worklet, css, map, svg, png, woff2, wasm, json, yaml); nullopt for any other extension,
// which is not served (nosniff: a browser would refuse an unknown type anyway).
std::optional<std::string> asset_content_type(std::string_view name);

// Whether an Accept-Encoding header value accepts gzip: a `gzip` (or `*`)
// coding whose q is not 0 (RFC 9110 12.5.3; names in any case).
bool accepts_gzip(std::string_view accept_encoding);

// GET /app/config.json: what the console needs to sign in and call the API,
// every URL built on the public URL `base`.
Json console_config(const std::string& base, const std::string& support_text);

// The 503 page served at the console's pages when `console_dir` holds no
// index.html: what to run to build it.
std::string not_built_page(const std::string& console_dir);

}  // namespace scribe::api::console
