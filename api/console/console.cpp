// The web console's pages, assets and configuration (console.h has the
// decisions). Files are read at each request, not cached: a rebuild of the
// console is served at once, and index.html is a few hundred bytes.
#include "api/console/console.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/console/console_files.h"
#include "api/services.h"
#include "common/error.h"

namespace scribe::api::console {
namespace {

constexpr const char* kImmutable = "public, max-age=31536000, immutable";

std::optional<std::string> read_whole(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

void add_security_headers(Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
}

Response ConsolePageHandler::handle(RequestContext& ctx) {
  const std::string& dir = ctx.services.config.console_dir;
  Response res;
  res.content_type = "text/html; charset=utf-8";
  res.set_header("Cache-Control", "no-cache");
  if (auto page = read_whole(std::filesystem::path(dir) / "index.html")) {
    res.body = std::move(*page);
  } else {
    res.status = 503;
    res.body = not_built_page(dir);
  }
  return res;
}

Response ConsoleAssetHandler::handle(RequestContext& ctx) {
  const std::string& name = ctx.params.at("name");
  auto type = asset_content_type(name);
  if (!is_safe_asset_name(name) || !type) throw Error::not_found("console asset");
  const auto path = std::filesystem::path(ctx.services.config.console_dir) / "assets" / name;
  std::shared_ptr<FileBody> file;
  bool gzipped = false;
  if (accepts_gzip(ctx.req.header("accept-encoding").value_or(""))) {
    file = FileBody::open(path.string() + ".gz");
    gzipped = file != nullptr;
  }
  if (!file) file = FileBody::open(path.string());
  if (!file) throw Error::not_found("console asset");
  Response res;
  res.content_type = *type;
  res.file = std::move(file);
  res.set_header("Cache-Control", kImmutable);
  // Caches keep the two encodings apart.
  res.set_header("Vary", "Accept-Encoding");
  if (gzipped) res.set_header("Content-Encoding", "gzip");
  return res;
}

Response ConsoleConfigHandler::handle(RequestContext& ctx) {
  const auto& cfg = ctx.services.config;
  Response res = Response::json(200, console_config(cfg.public_url, cfg.support_text));
  res.set_header("Cache-Control", "no-cache");
  return res;
}

}  // namespace scribe::api::console
