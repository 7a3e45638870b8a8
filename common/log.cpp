#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "common/time.h"

namespace scribe::log {
namespace {

std::shared_ptr<spdlog::logger>& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto l = spdlog::stderr_logger_mt("scribe");
    l->set_pattern("%v");
    return l;
  }();
  return instance;
}

void write(spdlog::level::level_enum level, std::string_view msg, Json fields) {
  auto& l = logger();
  if (!l->should_log(level)) return;
  Json line = Json::object();
  line["ts"] = to_iso8601(now());
  line["level"] = spdlog::level::to_string_view(level).data();
  line["msg"] = msg;
  if (fields.is_object())
    for (auto& [k, v] : fields.items()) line[k] = v;
  l->log(level, "{}", line.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace

void init(std::string_view level) {
  logger()->set_level(spdlog::level::from_str(std::string(level)));
  logger()->flush_on(spdlog::level::info);
}

void info(std::string_view msg, Json fields) { write(spdlog::level::info, msg, std::move(fields)); }
void warn(std::string_view msg, Json fields) { write(spdlog::level::warn, msg, std::move(fields)); }
void error(std::string_view msg, Json fields) { write(spdlog::level::err, msg, std::move(fields)); }
void debug(std::string_view msg, Json fields) { write(spdlog::level::debug, msg, std::move(fields)); }

}  // namespace scribe::log
