#include "domain/oauth.h"

#include <algorithm>

#include "common/crypto.h"
#include "domain/events.h"

namespace scribe::oauth {
namespace {

bool has_prefixed_secret(std::string_view token, std::string_view prefix) {
  if (token.size() != prefix.size() + kTokenSecretChars || token.substr(0, prefix.size()) != prefix) return false;
  return std::all_of(token.begin() + static_cast<std::ptrdiff_t>(prefix.size()), token.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::string generate_access_token() { return std::string(kAccessTokenPrefix) + crypto::random_base64url(32); }
std::string generate_refresh_token() { return std::string(kRefreshTokenPrefix) + crypto::random_base64url(32); }
std::string generate_code() { return crypto::random_base64url(32); }
std::string generate_dcr_client_id() { return "dcr_" + crypto::random_base64url(16); }
bool is_access_token(std::string_view token) { return has_prefixed_secret(token, kAccessTokenPrefix); }
bool is_refresh_token(std::string_view token) { return has_prefixed_secret(token, kRefreshTokenPrefix); }
std::string hash_secret(std::string_view token_or_code) { return crypto::sha256_hex(token_or_code); }

std::string console_redirect_uri(std::string_view base) { return std::string(base) + "/app/callback"; }

std::string resource_uri(std::string_view base, Audience audience) {
  return audience == Audience::Mcp ? std::string(base) + "/mcp" : std::string(base);
}

bool accepts(const std::vector<std::string>& resources, std::string_view base, Audience audience) {
  return contains(resources, resource_uri(base, audience));
}

std::vector<std::string> default_resources(std::string_view base) { return {std::string(base)}; }

std::optional<std::vector<std::string>> resolve_resources(std::string_view base,
                                                          const std::vector<std::string>& requested,
                                                          const std::vector<std::string>& fallback,
                                                          const std::vector<std::string>* within) {
  if (requested.empty()) return fallback;
  const std::string rest = resource_uri(base, Audience::Rest);
  const std::string mcp = resource_uri(base, Audience::Mcp);
  std::vector<std::string> out;
  for (const auto& given : requested) {
    // Compared as strings (RFC 8707 2; RFC 9728 3.3): a client sends the
    // `resource` of the protected-resource metadata. The one spelling
    // accepted besides is {base}/, the same URI with an empty path written
    // as "/" (RFC 3986 6.2.3), which URL libraries produce for {base}.
    const std::string& r = given == rest + "/" ? rest : given;
    if (r != rest && r != mcp) return std::nullopt;
    if (within && !contains(*within, r)) return std::nullopt;
    if (!contains(out, r)) out.push_back(r);
  }
  return out;
}

std::string client_stream(std::string_view client_id) { return "oauth-client-" + std::string(client_id); }
std::string grant_stream(int64_t grant_id) { return "oauth-grant-" + std::to_string(grant_id); }
std::string consents_stream(int64_t account_id) { return "oauth-consents-" + std::to_string(account_id); }

eventstore::NewEvent client_registered(const ClientRecord& c) {
  return {events::kOAuthClientRegistered,
          {{"client_id", c.client_id},
           {"kind", c.kind == ClientKind::Cimd ? "cimd" : "dcr"},
           {"client_name", c.client_name ? Json(*c.client_name) : Json(nullptr)},
           {"redirect_uris", c.redirect_uris},
           {"application_type", c.application_type}}};
}

eventstore::NewEvent client_used(std::string_view client_id) {
  return {events::kOAuthClientUsed, {{"client_id", client_id}}};
}

eventstore::NewEvent client_expired(std::string_view client_id) {
  return {events::kOAuthClientExpired, {{"client_id", client_id}}};
}

eventstore::NewEvent grant_issued(int64_t grant_id, int64_t account_id, std::string_view client_id,
                                  const std::vector<std::string>& resources) {
  return {events::kOAuthGrantIssued,
          {{"grant_id", grant_id}, {"account_id", account_id}, {"client_id", client_id}, {"resources", resources}}};
}

eventstore::NewEvent grant_revoked(int64_t grant_id, int64_t account_id, std::string_view client_id,
                                   std::string_view reason) {
  return {events::kOAuthGrantRevoked,
          {{"grant_id", grant_id}, {"account_id", account_id}, {"client_id", client_id}, {"reason", reason}}};
}

GrantState fold_grant(const std::vector<eventstore::RecordedEvent>& events) {
  return eventstore::fold<GrantState>(events, [](GrantState& g, const std::string& type, const Json& d) {
    if (type == events::kOAuthGrantIssued) {
      g.issued = true;
      g.account_id = d.at("account_id").get<int64_t>();
      g.client_id = d.at("client_id").get<std::string>();
    } else if (type == events::kOAuthGrantRevoked) {
      g.revoked = true;
    }
  });
}

std::vector<eventstore::NewEvent> revoke_grant(const GrantState& g, int64_t grant_id, std::string_view reason) {
  if (!g.issued || g.revoked) return {};
  return {grant_revoked(grant_id, g.account_id, g.client_id, reason)};
}

ConsentState fold_consents(const std::vector<eventstore::RecordedEvent>& events) {
  return eventstore::fold<ConsentState>(events, [](ConsentState& s, const std::string& type, const Json& d) {
    const auto client = d.at("client_id").get<std::string>();
    if (type == events::kOAuthConsentGiven) {
      if (!contains(s.clients, client)) s.clients.push_back(client);
    } else if (type == events::kOAuthConsentWithdrawn) {
      s.clients.erase(std::remove(s.clients.begin(), s.clients.end(), client), s.clients.end());
    }
  });
}

std::vector<eventstore::NewEvent> give_consent(const ConsentState& s, int64_t account_id, std::string_view client_id) {
  if (contains(s.clients, client_id)) return {};
  return {{events::kOAuthConsentGiven, {{"account_id", account_id}, {"client_id", client_id}}}};
}

std::vector<eventstore::NewEvent> withdraw_consent(const ConsentState& s, int64_t account_id,
                                                   std::string_view client_id) {
  if (!contains(s.clients, client_id)) return {};
  return {{events::kOAuthConsentWithdrawn, {{"account_id", account_id}, {"client_id", client_id}}}};
}

}  // namespace scribe::oauth
