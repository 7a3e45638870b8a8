#pragma once
#include <nlohmann/json.hpp>

namespace scribe {
using Json = nlohmann::json;
}
