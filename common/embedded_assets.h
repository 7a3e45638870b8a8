#pragma once
#include <string>
#include <string_view>
#include <vector>

// Files compiled into the binary by cmake/embed_assets.cmake.
namespace scribe::assets {

struct Migration {
  std::string name;  // e.g. "001_eventstore.sql"; the numeric prefix is the version.
  std::string sql;
};

const std::vector<Migration>& migrations();
std::string_view openapi_yaml();

}  // namespace scribe::assets
