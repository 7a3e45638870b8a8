#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// API key format and permissions. A key is `key_live_` followed by 40
// characters from [0-9A-Za-z]; only its SHA-256 is stored.
namespace scribe::apikey {

inline constexpr std::string_view kPrefix = "key_live_";
inline constexpr std::size_t kSecretLength = 40;

enum class Permission { Full, ReadOnly, Agent };

std::optional<Permission> parse_permission(std::string_view s);
std::string_view permission_name(Permission p);
std::vector<std::string> scopes(Permission p);
// Read-only keys may only read (GET, HEAD, OPTIONS).
bool allows_method(Permission p, std::string_view method);

std::string generate();
bool is_well_formed(std::string_view token);
std::string hash(std::string_view token);
// What is shown in listings: the prefix and the first 4 secret characters.
std::string display_prefix(std::string_view token);

}  // namespace scribe::apikey
