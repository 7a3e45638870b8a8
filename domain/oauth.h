#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "domain/limits.h"
#include "eventstore/event.h"

// OAuth 2.1 (issue 31): the formats of what the authorization server hands
// out, the resources a token may be bound to, and the streams and events of
// clients, grants and consents. Lifetimes and bounds are in domain/limits.h.
// The wire rules and their sources: docs/oauth_wire_rules.md.
namespace scribe::oauth {

// Tokens: a prefix and 43 base64url characters (32 random bytes). Only the
// SHA-256 (hex) of a token or code is stored.
inline constexpr std::string_view kAccessTokenPrefix = "sat_";
inline constexpr std::string_view kRefreshTokenPrefix = "srt_";
inline constexpr std::size_t kTokenSecretChars = 43;
std::string generate_access_token();
std::string generate_refresh_token();
std::string generate_code();                              // 43 base64url characters, no prefix
std::string generate_dcr_client_id();                     // "dcr_" + 22 base64url characters
bool is_access_token(std::string_view token);             // well formed, not necessarily valid
bool is_refresh_token(std::string_view token);            // well formed, not necessarily valid
std::string hash_secret(std::string_view token_or_code);  // SHA-256 hex

// The one scope; every token is full access (spec, Authentication 5).
inline constexpr std::string_view kScope = "transcribe";

// The built-in first-party client: the service's own web console. It has no
// consent page and no row in oauth_clients; its one redirect is
// {base}/app/callback. Only its tokens may call /dashboard/api/v1/.
inline constexpr std::string_view kConsoleClientId = "scribe-console";
std::string console_redirect_uri(std::string_view base);

// Resources (RFC 8707). `base` is the issuer: the public URL, an origin
// without a path. A token carries a non-empty subset of {base, base/mcp}:
// {base} is accepted on the REST API (/api/v1/*, /v1/*), {base}/mcp on /mcp.
enum class Audience { Rest, Mcp };
std::string resource_uri(std::string_view base, Audience audience);
// Whether a token bound to `resources` is accepted where `audience` is served.
bool accepts(const std::vector<std::string>& resources, std::string_view base, Audience audience);

// The resources of a request (authorize, token, refresh). `requested` are the
// `resource` parameters in order (duplicates collapse). Without any:
// `fallback` (authorize: {base}; token and refresh: what the code or grant
// holds). Each must be one of the two resources, and when `within` is given,
// one of those (a token request narrows its code's resources, a refresh its
// grant's; never widens). Otherwise nullopt: `invalid_target`.
std::optional<std::vector<std::string>> resolve_resources(std::string_view base,
                                                          const std::vector<std::string>& requested,
                                                          const std::vector<std::string>& fallback,
                                                          const std::vector<std::string>* within = nullptr);
// The default of an authorization request without `resource`: {base}.
std::vector<std::string> default_resources(std::string_view base);

// Streams.
std::string client_stream(std::string_view client_id);
std::string grant_stream(int64_t grant_id);
std::string consents_stream(int64_t account_id);

// Events (payloads in domain/events.h).
enum class ClientKind { Dcr, Cimd };
struct ClientRecord {
  std::string client_id;
  ClientKind kind = ClientKind::Dcr;
  std::optional<std::string> client_name;
  std::vector<std::string> redirect_uris;
  std::string application_type = "web";  // "web" | "native"
};
eventstore::NewEvent client_registered(const ClientRecord& c);
eventstore::NewEvent client_used(std::string_view client_id);
eventstore::NewEvent client_expired(std::string_view client_id);
eventstore::NewEvent grant_issued(int64_t grant_id, int64_t account_id, std::string_view client_id,
                                  const std::vector<std::string>& resources);
eventstore::NewEvent grant_revoked(int64_t grant_id, int64_t account_id, std::string_view client_id,
                                   std::string_view reason);

// A grant's state from its stream.
struct GrantState {
  int64_t version = 0;
  bool issued = false;
  bool revoked = false;
  int64_t account_id = 0;
  std::string client_id;
};
GrantState fold_grant(const std::vector<eventstore::RecordedEvent>& events);
// GrantRevoked when the grant exists and is not revoked yet; nothing otherwise.
std::vector<eventstore::NewEvent> revoke_grant(const GrantState& g, int64_t grant_id, std::string_view reason);

// A person's remembered consents (client ids) from their consent stream.
struct ConsentState {
  int64_t version = 0;
  std::vector<std::string> clients;
};
ConsentState fold_consents(const std::vector<eventstore::RecordedEvent>& events);
std::vector<eventstore::NewEvent> give_consent(const ConsentState& s, int64_t account_id, std::string_view client_id);
std::vector<eventstore::NewEvent> withdraw_consent(const ConsentState& s, int64_t account_id,
                                                   std::string_view client_id);

}  // namespace scribe::oauth
