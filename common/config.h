#pragma once
#include <cstdint>
#include <string>
#include <vector>

// The HTTP layer's part of the process configuration, and the parsers every
// setting's value goes through. The settings themselves (names, defaults,
// sources, the documentation table) are declared once in app/settings.cpp,
// which fills this struct; nothing below app/ reads the environment.
namespace scribe {

struct Config {
  std::string database_url;
  std::string listen_host;
  uint16_t listen_port = 0;
  // Base URL of links in responses; app/settings.cpp derives it from the
  // listen address when the operator gives none.
  std::string public_url;
  bool public_url_given = false;
  // Web origins besides this server's own whose pages may call /mcp
  // (api/mcp/mcp_origins.h), each canonical: scheme://host[:port].
  std::vector<std::string> mcp_allowed_origins;
  int io_threads = 1;
  int db_pool_size = 1;
  int rate_limit_per_minute = 1;
  std::string log_level;
  // Where GET /metrics is served: "host:port", "[v6]:port", or "0"/"off".
  std::string metrics_addr;
  // POST /v1/audio/transcriptions without an Idempotency-Key: how long after
  // it finished a transcription still answers a repeat of the same upload
  // (api/openai/transcriptions_handler.cpp).
  int openai_dedupe_seconds = 0;
  // OAuth (api/oauth/; app/settings.cpp fills these from domain/limits.h's
  // defaults): lifetimes of access tokens and authorization codes, whether a
  // client metadata document may be fetched from a loopback or private host
  // (tests), and the scrypt cost of passwords set from now on.
  int oauth_access_ttl_seconds = 3600;
  int oauth_code_ttl_seconds = 60;
  bool oauth_cimd_allow_private = false;
  int password_hash_cost_log2 = 15;
  // Realtime sessions (domain/realtime.h; app/settings.cpp): a live session
  // with no connection heartbeat for this long is ended and settled by
  // housekeeping; tickets live 60 s unless a test shortens them.
  int realtime_stale_seconds = 120;
  int realtime_ticket_ttl_seconds = 60;
  // The stream (api/realtime/live_registry.h): a connection with neither
  // audio nor KeepAlive for idle seconds ends; the heartbeat learns of a
  // DELETE or a resume elsewhere; a client may run max-ahead seconds ahead
  // of real time (test-only: raise it so a test streams a minute in
  // seconds); realtime threads recognize the streams.
  int realtime_idle_seconds = 30;
  int realtime_heartbeat_seconds = 5;
  int realtime_max_ahead_seconds = 10;
  int realtime_threads = 2;
  // GET .../media: how long its signed links last (domain/limits.h's
  // kMediaLinkTtlSeconds unless a test shortens it).
  int media_link_ttl_seconds = 3600;
  // The web console (api/console/): the folder its build wrote (index.html
  // and assets/), what its support page says, and the request budget of its
  // sign-in's tokens (apart from API keys and other apps).
  std::string console_dir;
  std::string support_text;
  int console_rate_limit_per_minute = 1;
  // Ask's ways past the recognizer's errors (enrichment/heard_terms.h,
  // SCRIBE_ASK_MATCHING): alternates, sound-alikes, meaning-alikes.
  bool ask_alternates = true;
  bool ask_sound_alikes = true;
  bool ask_meaning_alikes = true;
};

// Value parsers. Each throws std::invalid_argument with what is wrong with the
// text (the caller adds the setting's name and what is allowed).

// A whole decimal integer in [min, max]: "80x", "", " 8" and "1e3" are refused.
int parse_int_setting(const std::string& text, int min, int max);
// 1/0, true/false, yes/no, on/off (any case).
bool parse_bool_setting(const std::string& text);
// Words separated by spaces or tabs, e.g. decoder arguments.
std::vector<std::string> split_words(const std::string& text);

// A listen address "host:port" or "[ipv6]:port" split into its parts; false
// when it is not of that form or the port is not 0-65535.
bool parse_listen_address(const std::string& addr, std::string& host, uint16_t& port);
// Whether a metrics_addr value turns the metrics listener off ("0", "off", "").
bool metrics_disabled(const std::string& addr);

}  // namespace scribe
