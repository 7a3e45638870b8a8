#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"

// Which web origins may call /mcp. A browser sends its page's Origin with
// every request a page makes, so checking it keeps a page on another site
// from driving a caller's account through this server, and DNS rebinding
// (a hostile name resolving to this address) with it. The list is fixed by
// the configuration and never taken from the request itself (its Host): a
// rebound page's own Origin and Host agree, so admitting whatever the Host
// names would admit that page.
namespace scribe::api::mcp {

// An origin as browsers serialize it (RFC 6454): lower-case scheme and host,
// the port only when it is not the scheme's default; nullopt when `origin`
// is not scheme://host[:port] with scheme http or https and nothing after.
std::optional<std::string> canonical_origin(const std::string& origin);

// The origins allowed: this server's own under the loopback names
// (localhost, 127.0.0.1, [::1], with the port it listens on) when it listens
// on a loopback or wildcard address, under its listen host, and under its
// public URL; then those the operator configured (SCRIBE_MCP_ALLOWED_ORIGINS).
// Canonical, without repeats.
std::vector<std::string> allowed_origins(const Config& config);

bool origin_allowed(const Config& config, const std::string& origin);

}  // namespace scribe::api::mcp
