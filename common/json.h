#pragma once
#include <nlohmann/json.hpp>
#include <optional>

namespace scribe {
using Json = nlohmann::json;

// The value of `key` in object `d`, or nullopt when the key is absent or null
// (events of deleted transcriptions are redacted down to a few fields).
template <typename T>
std::optional<T> optional_field(const Json& d, const char* key) {
  auto it = d.find(key);
  if (it == d.end() || it->is_null()) return std::nullopt;
  return it->template get<T>();
}

}  // namespace scribe
