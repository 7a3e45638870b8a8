#include "common/config.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace scribe {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

}  // namespace

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  std::size_t used = 0;
  int x = 0;
  try {
    x = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || v[used] != '\0')
    throw std::runtime_error(std::string("environment variable ") + name + " is not an integer");
  return x;
}

Config Config::from_env() {
  Config c;
  if (auto v = env("SCRIBE_DATABASE_URL")) c.database_url = v;
  if (auto v = env("SCRIBE_LISTEN_HOST")) c.listen_host = v;
  c.listen_port = static_cast<uint16_t>(env_int("SCRIBE_PORT", c.listen_port));
  if (auto v = env("SCRIBE_PUBLIC_URL")) {
    c.public_url = v;
  } else {
    c.public_url = "http://" + c.listen_host + ":" + std::to_string(c.listen_port);
  }
  c.io_threads = env_int("SCRIBE_IO_THREADS", c.io_threads);
  c.db_pool_size = env_int("SCRIBE_DB_POOL", c.db_pool_size);
  c.rate_limit_per_minute = env_int("SCRIBE_RATE_LIMIT_PER_MINUTE", c.rate_limit_per_minute);
  if (auto v = env("SCRIBE_LOG_LEVEL")) c.log_level = v;
  if (auto v = std::getenv("SCRIBE_METRICS_ADDR")) c.metrics_addr = v;
  return c;
}

bool parse_listen_address(const std::string& addr, std::string& host, uint16_t& port) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size() || addr.size() - colon - 1 > 5)
    return false;
  std::string h = addr.substr(0, colon);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string::npos) {
    return false;  // an IPv6 address needs its brackets
  }
  int p = 0;
  for (std::size_t i = colon + 1; i < addr.size(); ++i) {
    if (addr[i] < '0' || addr[i] > '9') return false;
    p = p * 10 + (addr[i] - '0');
  }
  if (p > 65535) return false;
  host = h;
  port = static_cast<uint16_t>(p);
  return true;
}

bool metrics_disabled(const std::string& addr) { return addr.empty() || addr == "0" || addr == "off"; }

}  // namespace scribe
