#pragma once
#include <string_view>

#include "common/json.h"

// Structured logging: one JSON object per line on stderr, written by spdlog.
// Fields such as request_id travel in `fields`; callers never format JSON by hand.
namespace scribe::log {

void init(std::string_view level = "info");
void info(std::string_view msg, Json fields = Json::object());
void warn(std::string_view msg, Json fields = Json::object());
void error(std::string_view msg, Json fields = Json::object());
void debug(std::string_view msg, Json fields = Json::object());

}  // namespace scribe::log
