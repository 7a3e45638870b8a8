#include "api/mcp/mcp_origins.h"

#include <algorithm>

#include "api/http.h"

namespace scribe::api::mcp {
namespace {

bool loopback_or_wildcard(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host == "0.0.0.0" || host == "::" ||
         host.rfind("127.", 0) == 0;
}

std::string with_port(const std::string& host, int port) {
  // An IPv6 literal is bracketed in an origin.
  const std::string name = host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host;
  return "http://" + name + ":" + std::to_string(port);
}

}  // namespace

std::optional<std::string> canonical_origin(const std::string& origin) {
  auto parsed = parse_absolute_target(origin + "/");
  if (!parsed || !parsed->valid || parsed->origin_form != "/") return std::nullopt;
  const bool default_port =
      (parsed->scheme == "http" && parsed->port == 80) || (parsed->scheme == "https" && parsed->port == 443);
  return parsed->scheme + "://" + parsed->host + (default_port ? "" : ":" + std::to_string(parsed->port));
}

std::vector<std::string> allowed_origins(const Config& config) {
  std::vector<std::string> candidates;
  if (config.listen_port > 0) {
    if (loopback_or_wildcard(config.listen_host))
      for (const char* name : {"localhost", "127.0.0.1", "[::1]"})
        candidates.push_back(with_port(name, config.listen_port));
    if (!config.listen_host.empty()) candidates.push_back(with_port(config.listen_host, config.listen_port));
  }
  if (!config.public_url.empty())
    if (auto pub = parse_absolute_target(config.public_url + "/"); pub && pub->valid)
      candidates.push_back(pub->scheme + "://" + pub->authority);
  for (const auto& o : config.mcp_allowed_origins) candidates.push_back(o);
  std::vector<std::string> out;
  for (const auto& c : candidates)
    if (auto canonical = canonical_origin(c); canonical && std::find(out.begin(), out.end(), *canonical) == out.end())
      out.push_back(*canonical);
  return out;
}

bool origin_allowed(const Config& config, const std::string& origin) {
  auto canonical = canonical_origin(origin);
  if (!canonical) return false;
  const auto allowed = allowed_origins(config);
  return std::find(allowed.begin(), allowed.end(), *canonical) != allowed.end();
}

}  // namespace scribe::api::mcp
