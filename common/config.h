#pragma once
#include <cstdint>
#include <string>

namespace scribe {

// Process settings, read from SCRIBE_* environment variables and overridden by
// command-line flags. Product limits from the spec live in domain/limits.h instead.
struct Config {
  std::string database_url = "postgresql://scribe@127.0.0.1:5433/scribe";
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 8080;
  std::string public_url = "http://127.0.0.1:8080";
  int io_threads = 1;
  int db_pool_size = 8;
  int rate_limit_per_minute = 60;  // operators may raise it (SCRIBE_RATE_LIMIT_PER_MINUTE)
  bool run_projectors = true;
  std::string log_level = "info";
  // Where GET /metrics is served: its own listener, apart from the API port,
  // loopback by default so the scrape is not public (SCRIBE_METRICS_ADDR,
  // "host:port", "[v6]:port"; "0" or "off" for none).
  std::string metrics_addr = "127.0.0.1:9464";

  static Config from_env();
};

// A listen address "host:port" or "[ipv6]:port" split into its parts; false
// when it is not of that form or the port is not 0-65535.
bool parse_listen_address(const std::string& addr, std::string& host, uint16_t& port);
// Whether a metrics_addr value turns the metrics listener off ("0", "off", "").
bool metrics_disabled(const std::string& addr);

// An integer setting from the environment: `fallback` when unset or empty;
// throws std::runtime_error naming the variable when it is not an integer, so
// a typo stops the process instead of silently using the default.
int env_int(const char* name, int fallback);

}  // namespace scribe
