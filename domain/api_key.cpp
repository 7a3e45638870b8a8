#include "domain/api_key.h"

#include "common/crypto.h"

namespace scribe::apikey {

std::optional<Permission> parse_permission(std::string_view s) {
  if (s == "full") return Permission::Full;
  if (s == "read_only") return Permission::ReadOnly;
  if (s == "agent") return Permission::Agent;
  return std::nullopt;
}

std::string_view permission_name(Permission p) {
  switch (p) {
    case Permission::Full:
      return "full";
    case Permission::ReadOnly:
      return "read_only";
    case Permission::Agent:
      return "agent";
  }
  return "full";
}

std::vector<std::string> scopes(Permission p) {
  if (p == Permission::ReadOnly) return {"read"};
  return {"read", "write"};
}

bool allows_method(Permission p, std::string_view method) {
  if (p != Permission::ReadOnly) return true;
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

std::string generate() { return std::string(kPrefix) + crypto::random_alnum(kSecretLength); }

bool is_well_formed(std::string_view token) {
  if (token.size() != kPrefix.size() + kSecretLength || token.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : token.substr(kPrefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return false;
  return true;
}

std::string hash(std::string_view token) { return crypto::sha256_hex(token); }

std::string display_prefix(std::string_view token) { return std::string(token.substr(0, kPrefix.size() + 4)); }

}  // namespace scribe::apikey
