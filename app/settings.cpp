#include "app/settings.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/mcp/mcp_origins.h"
#include "common/text.h"
#include "domain/limits.h"
#include "domain/realtime.h"
#include "domain/webhook.h"
#include "enrichment/heard_terms.h"
#include "speech/speech_profile.h"

extern char** environ;

namespace scribe::app {
namespace {

using Apply = std::function<void(Settings&, const std::string&)>;

std::string between(int min, int max) {
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

Apply integer(int min, int max, std::function<void(Settings&, int)> set) {
  return [=](Settings& s, const std::string& v) { set(s, parse_int_setting(v, min, max)); };
}

Apply text(std::function<void(Settings&, const std::string&)> set) {
  return [=](Settings& s, const std::string& v) {
    if (v.empty()) throw std::invalid_argument("empty");
    set(s, v);
  };
}

Apply boolean(std::function<void(Settings&, bool)> set) {
  return [=](Settings& s, const std::string& v) { set(s, parse_bool_setting(v)); };
}

bool is_http_url(const std::string& v) { return v.rfind("http://", 0) == 0 || v.rfind("https://", 0) == 0; }

Apply http_url(std::function<void(Settings&, const std::string&)> set) {
  return [=](Settings& s, const std::string& v) {
    if (!is_http_url(v) || v.find_first_of(" \t") != std::string::npos)
      throw std::invalid_argument("not an http(s) URL");
    set(s, v);
  };
}

std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()); }
std::string ms_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()); }

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string retry_text(const webhook::RetryPolicy& p) {
  std::vector<std::string> items;
  for (auto d : p.delays) items.push_back(std::to_string(d.count()));
  return join(items, ",");
}

constexpr const char* kDefaultSupportText =
    "For help with this service, contact the people who run this deployment of it.";

std::vector<SettingSpec> make_specs() {
  const workers::WorkerOptions worker;
  const workers::DispatcherOptions webhooks;
  const media::MediaProbeOptions media;
  const speech::PocketSphinxOptions sphinx;
  const speech::OpenAiAsrOptions openai;
  const enrichment::ChatOptions chat;
  const int min_webhook_lease = limits::kWebhookTimeoutSeconds + 1;
  std::vector<SettingSpec> t;
  // --- server -------------------------------------------------------------
  t.push_back({"SCRIBE_DATABASE_URL", "database-url", "server", "PostgreSQL connection URL", "a postgresql:// URL",
               "postgresql://scribe@127.0.0.1:5433/scribe", true, [](Settings& s, const std::string& v) {
                 if (v.rfind("postgresql://", 0) != 0 && v.rfind("postgres://", 0) != 0)
                   throw std::invalid_argument("not a postgresql:// URL");
                 s.server.database_url = v;
               }});
  t.push_back({"SCRIBE_LISTEN_HOST", "host", "server", "address the HTTP API listens on", "a host name or IP address",
               "127.0.0.1", false, text([](Settings& s, const std::string& v) { s.server.listen_host = v; })});
  t.push_back({"SCRIBE_PORT", "port", "server", "port the HTTP API listens on; 0 for any free port", between(0, 65535),
               "8080", false,
               integer(0, 65535, [](Settings& s, int v) { s.server.listen_port = static_cast<uint16_t>(v); })});
  // An origin: it is the OAuth issuer and the base of the resources and of
  // their well-known metadata URLs, which a path would make ambiguous.
  t.push_back({"SCRIBE_PUBLIC_URL", "public-url", "server",
               "the public origin of the service (behind a reverse proxy, the proxy's): the base of links in "
               "responses (deep links, upload URLs) and the OAuth issuer",
               "an http(s) origin, scheme://host[:port] with no path", "<http://host:bound port>", false,
               [](Settings& s, const std::string& v) {
                 // One trailing slash is what people type; anything more is a path.
                 const std::string origin = v.size() > 1 && v.back() == '/' ? v.substr(0, v.size() - 1) : v;
                 auto canonical = api::mcp::canonical_origin(origin);
                 if (!canonical || origin.find('@') != std::string::npos)
                   throw std::invalid_argument(
                       "not an origin: give scheme://host[:port] with no path, query or fragment (serve the service "
                       "at the root of its host name)");
                 s.server.public_url = *canonical;
                 s.server.public_url_given = true;
               }});
  t.push_back({"SCRIBE_MCP_ALLOWED_ORIGINS", "mcp-allowed-origins", "server",
               "web origins, besides this server's own (its loopback names when it listens on loopback, its listen "
               "host and its public URL), whose pages may call /mcp; any other Origin is refused 403",
               "a comma list of origins, scheme://host[:port] with scheme http or https", "(none)", false,
               [](Settings& s, const std::string& v) {
                 s.server.mcp_allowed_origins.clear();
                 for (const auto& item : split_list(v, EmptyItems::kDrop)) {
                   auto origin = api::mcp::canonical_origin(item);
                   if (!origin) throw std::invalid_argument("'" + item + "' is not an http(s) origin");
                   s.server.mcp_allowed_origins.push_back(*origin);
                 }
               }});
  t.push_back({"SCRIBE_IO_THREADS", "io-threads", "server", "HTTP I/O threads", between(1, 256), "1", false,
               integer(1, 256, [](Settings& s, int v) { s.server.io_threads = v; })});
  t.push_back({"SCRIBE_DB_POOL", "db-pool", "server", "database connections and request threads", between(1, 1024), "8",
               false, integer(1, 1024, [](Settings& s, int v) { s.server.db_pool_size = v; })});
  t.push_back({"SCRIBE_RATE_LIMIT_PER_MINUTE", "rate-limit", "server", "requests per minute per API key",
               between(1, 100'000'000), std::to_string(limits::kRequestsPerMinute), false,
               integer(1, 100'000'000, [](Settings& s, int v) { s.server.rate_limit_per_minute = v; })});
  t.push_back({"SCRIBE_CONSOLE_RATE_LIMIT_PER_MINUTE", "console-rate-limit", "server",
               "requests per minute of the web console's sign-in, per account (a budget apart from API keys and "
               "other apps)",
               between(1, 100'000'000), std::to_string(limits::kConsoleRequestsPerMinute), false,
               integer(1, 100'000'000, [](Settings& s, int v) { s.server.console_rate_limit_per_minute = v; })});
  t.push_back({"SCRIBE_CONSOLE_DIR", "console-dir", "server",
               "the web console's build (index.html and assets/, what console/build.mjs writes), served at /app; "
               "without index.html there, /app answers 503 saying how to build it",
               "a folder path", "<source tree>/console/dist", false,
               text([](Settings& s, const std::string& v) { s.server.console_dir = v; })});
  t.push_back({"SCRIBE_SUPPORT_TEXT", "support-text", "server",
               "what the web console's support page (/app/support, GET /me links.support) says about where help is "
               "for this deployment",
               "text", kDefaultSupportText, false,
               text([](Settings& s, const std::string& v) { s.server.support_text = v; })});
  t.push_back({"SCRIBE_ASK_MATCHING", "ask-matching", "server",
               "how ask hears past the recognizer's errors: the words it almost heard (alternates), words that sound "
               "like the question's (sound) and words that mean the same (meaning); docs/heard_matching.md",
               "a comma list of alternates, sound, meaning, or none", "alternates,sound,meaning", false,
               [](Settings& s, const std::string& v) {
                 const auto m = enrichment::parse_heard_matching(v);
                 s.server.ask_alternates = m.alternates;
                 s.server.ask_sound_alikes = m.sound_alikes;
                 s.server.ask_meaning_alikes = m.meaning_alikes;
               }});
  t.push_back({"SCRIBE_LOG_LEVEL", "log-level", "server", "least severe log level written",
               "debug, info, warn or error", "info", false, [](Settings& s, const std::string& v) {
                 if (v != "debug" && v != "info" && v != "warn" && v != "error")
                   throw std::invalid_argument("not a log level");
                 s.server.log_level = v;
               }});
  t.push_back({"SCRIBE_METRICS_ADDR", "metrics-addr", "server",
               "where GET /metrics is served (its own listener; the API port does not serve it)",
               "host:port, [ipv6]:port (port 0 for any free port), or 0/off for nowhere", "127.0.0.1:9464", false,
               [](Settings& s, const std::string& v) {
                 std::string host;
                 uint16_t port = 0;
                 if (!metrics_disabled(v) && !parse_listen_address(v, host, port))
                   throw std::invalid_argument("not a listen address");
                 s.server.metrics_addr = v;
               }});
  t.push_back({"SCRIBE_HOUSEKEEPING_SECONDS", "housekeeping-seconds", "server",
               "how often expired unfinished uploads, idempotency entries older than 24 h and the draft text of "
               "transcriptions finished 10 minutes before are deleted; 0 for never",
               between(0, 86400), "600", false,
               integer(0, 86400, [](Settings& s, int v) { s.housekeeping_seconds = v; })});
  t.push_back({"SCRIBE_OPENAI_DEDUPE_SECONDS", "openai-dedupe-seconds", "server",
               "POST /v1/audio/transcriptions without an Idempotency-Key: for how long after a transcription "
               "finished the same key sending the same file with the same model and language gets that "
               "transcription again instead of a new charge (while it runs, always); 0 for only while it runs",
               between(0, 86400), std::to_string(limits::kOpenAiDedupeSecondsDefault), false,
               integer(0, 86400, [](Settings& s, int v) { s.server.openai_dedupe_seconds = v; })});
  // --- realtime -----------------------------------------------------------
  t.push_back({"SCRIBE_REALTIME_STALE_SECONDS", "realtime-stale-seconds", "server",
               "a live realtime session with no connection heartbeat for this long is ended by housekeeping and "
               "settled for its persisted audio; a resume within it continues the session",
               between(2, 3600), std::to_string(realtime::kDefaultStaleSeconds), false,
               integer(2, 3600, [](Settings& s, int v) { s.server.realtime_stale_seconds = v; })});
  t.push_back(
      {"SCRIBE_REALTIME_TICKET_TTL_SECONDS", "realtime-ticket-ttl-seconds", "server",
       "lifetime of a realtime session's WebSocket ticket (test-only: keep the spec's 60 in production)",
       between(1, realtime::kTicketTtlSeconds), std::to_string(realtime::kTicketTtlSeconds), false,
       integer(1, realtime::kTicketTtlSeconds, [](Settings& s, int v) { s.server.realtime_ticket_ttl_seconds = v; })});
  t.push_back({"SCRIBE_REALTIME_IDLE_SECONDS", "realtime-idle-seconds", "server",
               "a realtime connection with neither audio nor KeepAlive for this long ends the session (Termination "
               "reason idle)",
               between(1, 3600), "30", false,
               integer(1, 3600, [](Settings& s, int v) { s.server.realtime_idle_seconds = v; })});
  t.push_back({"SCRIBE_REALTIME_HEARTBEAT_SECONDS", "realtime-heartbeat-seconds", "server",
               "how often a realtime connection's server renews its claim and learns of a DELETE or a resume on "
               "another process (the socket then ends within one beat)",
               between(1, 60), "5", false,
               integer(1, 60, [](Settings& s, int v) { s.server.realtime_heartbeat_seconds = v; })});
  t.push_back({"SCRIBE_REALTIME_MAX_AHEAD_SECONDS", "realtime-max-ahead-seconds", "server",
               "how far ahead of real time a realtime client may send audio before it is closed (4009 too_fast); it "
               "is warned at half (test-only above the default: tests stream long recordings fast)",
               between(2, 3600), "10", false,
               integer(2, 3600, [](Settings& s, int v) { s.server.realtime_max_ahead_seconds = v; })});
  t.push_back({"SCRIBE_REALTIME_THREADS", "realtime-threads", "server",
               "threads that recognize realtime streams in each scribe serve", between(1, 64), "2", false,
               integer(1, 64, [](Settings& s, int v) { s.server.realtime_threads = v; })});
  t.push_back({"SCRIBE_MEDIA_LINK_TTL_SECONDS", "media-link-ttl-seconds", "server",
               "lifetime of the signed media links of GET .../media (test-only: keep the default in production)",
               between(1, 86400), std::to_string(limits::kMediaLinkTtlSeconds), false,
               integer(1, 86400, [](Settings& s, int v) { s.server.media_link_ttl_seconds = v; })});
  // --- oauth --------------------------------------------------------------
  // Lifetimes of codes and access tokens are the spec's; these settings exist
  // so that end-to-end tests see them end without sleeping (test-only).
  t.push_back({"SCRIBE_OAUTH_ACCESS_TTL_SECONDS", "oauth-access-ttl-seconds", "oauth",
               "lifetime of an OAuth access token (test-only: keep the default in production)", between(1, 86400),
               std::to_string(limits::kOAuthAccessTokenTtlSeconds), false,
               integer(1, 86400, [](Settings& s, int v) { s.server.oauth_access_ttl_seconds = v; })});
  t.push_back({"SCRIBE_OAUTH_CODE_TTL_SECONDS", "oauth-code-ttl-seconds", "oauth",
               "lifetime of an OAuth authorization code (test-only: keep the default in production)", between(1, 600),
               std::to_string(limits::kOAuthCodeTtlSeconds), false,
               integer(1, 600, [](Settings& s, int v) { s.server.oauth_code_ttl_seconds = v; })});
  t.push_back({"SCRIBE_OAUTH_CIMD_ALLOW_PRIVATE", "oauth-cimd-allow-private", "oauth",
               "let client metadata documents (https client_id URLs) be fetched from loopback and private hosts "
               "(test-only: the tests serve them from a loopback https server)",
               "1/0, true/false, yes/no, on/off", "0", false,
               boolean([](Settings& s, bool v) { s.server.oauth_cimd_allow_private = v; })});
  t.push_back(
      {"SCRIBE_PASSWORD_HASH_COST_LOG2", "password-hash-cost-log2", "oauth",
       "scrypt cost (log2 of N) of passwords set from now on; stored hashes keep their own (test-only: "
       "lower it only to make tests fast)",
       between(limits::kPasswordScryptMinLog2N, 20), std::to_string(limits::kPasswordScryptLog2N), false,
       integer(limits::kPasswordScryptMinLog2N, 20, [](Settings& s, int v) { s.server.password_hash_cost_log2 = v; })});
  // --- storage ------------------------------------------------------------
  t.push_back({"SCRIBE_DATA_DIR", "data-dir", "storage", "folder under which objects and scratch files go by default",
               "a folder path", "data", false, text([](Settings& s, const std::string& v) { s.data_dir = v; })});
  t.push_back({"SCRIBE_OBJECT_STORE_DIR", "object-store-dir", "storage",
               "where uploads and transcript artifacts are stored", "a folder path", "<data dir>/objects", false,
               text([](Settings& s, const std::string& v) { s.object_store_dir = v; })});
  t.push_back({"SCRIBE_WORDNET_DIR", "wordnet-dir", "storage",
               "WordNet's database (Debian's wordnet-base): ask's meaning-alike matching and section title nouns; "
               "without it they are off (logged once)",
               "a folder path", "/usr/share/wordnet", false,
               text([](Settings& s, const std::string& v) { s.wordnet_dir = v; })});
  t.push_back({"SCRIBE_WORK_DIR", "work-dir", "storage",
               "scratch space: upload bodies while they arrive (staging/) and fetched media (media/); best on the "
               "object store's file system, so finishing an upload is a rename",
               "a folder path", "<data dir>/work", false,
               text([](Settings& s, const std::string& v) { s.work_dir = v; })});
  // --- outbound -----------------------------------------------------------
  t.push_back({"SCRIBE_ALLOW_PRIVATE_URLS", "allow-private-urls", "outbound",
               "let media links, callbacks and webhooks reach loopback and private hosts (local testing only)",
               "1/0, true/false, yes/no, on/off", "0", false,
               boolean([](Settings& s, bool v) { s.outbound.allow_private = v; })});
  t.push_back({"SCRIBE_ALLOWED_PRIVATE_ENDPOINTS", "allowed-private-endpoints", "outbound",
               "private endpoints that may be reached anyway, e.g. an in-house media server",
               "a comma list of numeric ip:port ([v6]:port)", "(none)", false, [](Settings& s, const std::string& v) {
                 s.outbound.allowed_private_endpoints.clear();
                 for (const auto& item : split_list(v, EmptyItems::kDrop)) {
                   std::string host;
                   uint16_t port = 0;
                   if (!parse_listen_address(item, host, port) || item.find_first_of(kBlankChars) != std::string::npos)
                     throw std::invalid_argument("'" + item + "' is not ip:port");
                   s.outbound.allowed_private_endpoints.push_back(item);
                 }
               }});
  t.push_back({"SCRIBE_OUTBOUND_CA_FILE", "outbound-ca-file", "outbound",
               "CA bundle trusted for outbound HTTPS instead of the system's", "a readable file", "(the system's)",
               false, [](Settings& s, const std::string& v) {
                 if (!std::ifstream(v)) throw std::invalid_argument("cannot be read");
                 s.outbound.ca_file = v;
               }});
  // --- media --------------------------------------------------------------
  t.push_back({"SCRIBE_YTDLP", "ytdlp", "media", "yt-dlp program for video-site links", "a program name or path",
               media.ytdlp, false, text([](Settings& s, const std::string& v) { s.media.ytdlp = v; })});
  t.push_back({"SCRIBE_FFPROBE", "ffprobe", "media", "ffprobe program that measures media", "a program name or path",
               media.ffprobe, false, text([](Settings& s, const std::string& v) { s.media.ffprobe = v; })});
  t.push_back(
      {"SCRIBE_MEDIA_DOWNLOAD_TIMEOUT_SECONDS", "media-download-timeout-seconds", "media",
       "longest download of a media link by a worker", between(1, 86400), seconds_text(media.download.total_timeout),
       false, integer(1, 86400, [](Settings& s, int v) { s.media.download.total_timeout = std::chrono::seconds(v); })});
  t.push_back({"SCRIBE_YTDLP_TIMEOUT_SECONDS", "ytdlp-timeout-seconds", "media", "longest yt-dlp run",
               between(1, 86400), seconds_text(media.ytdlp_timeout), false,
               integer(1, 86400, [](Settings& s, int v) { s.media.ytdlp_timeout = std::chrono::seconds(v); })});
  t.push_back({"SCRIBE_FFPROBE_TIMEOUT_SECONDS", "ffprobe-timeout-seconds", "media", "longest ffprobe run",
               between(1, 86400), seconds_text(media.ffprobe_timeout), false,
               integer(1, 86400, [](Settings& s, int v) { s.media.ffprobe_timeout = std::chrono::seconds(v); })});
  // --- speech -------------------------------------------------------------
  t.push_back({"SCRIBE_SPEECH_PROFILE", "speech-profile", "speech",
               "speed/accuracy profile of the standard pipeline (bench/README.md, Speech profiles)",
               speech::speech_profile_names(), speech::kDefaultSpeechProfile, false,
               [](Settings& s, const std::string& v) {
                 if (!speech::find_speech_profile(v)) throw std::invalid_argument("not a speech profile");
                 s.pocketsphinx.profile = v;
               }});
  t.push_back({"SCRIBE_POCKETSPHINX_MODEL_DIR", "pocketsphinx-model-dir", "speech",
               "PocketSphinx model folder (en-us/, cmudict-en-us.dict, en-us.lm.bin)", "a folder path",
               sphinx.model_dir, false, text([](Settings& s, const std::string& v) { s.pocketsphinx.model_dir = v; })});
  t.push_back({"SCRIBE_POCKETSPHINX_LM", "pocketsphinx-lm", "speech", "language model file (e.g. from `scribe lm`)",
               "a file path", "<model dir>/en-us.lm.bin", false,
               text([](Settings& s, const std::string& v) { s.pocketsphinx.language_model = v; })});
  t.push_back({"SCRIBE_POCKETSPHINX_ARGS", "pocketsphinx-args", "speech",
               "extra decoder arguments, replacing the profile's of the same name", "space-separated -name value pairs",
               "(none)", false, [](Settings& s, const std::string& v) {
                 auto words = split_words(v);
                 for (std::size_t i = 0; i < words.size(); i += 2)
                   if (words[i].size() < 2 || words[i][0] != '-' || i + 1 == words.size())
                     throw std::invalid_argument("not -name value pairs");
                 s.pocketsphinx.extra_args = words;
               }});
  t.push_back({"SCRIBE_POCKETSPHINX_VTLN", "pocketsphinx-vtln", "speech",
               "vocal tract length normalization per recording", "1/0, true/false, yes/no, on/off", "<the profile's>",
               false, boolean([](Settings& s, bool v) { s.pocketsphinx_vtln = v; })});
  t.push_back({"SCRIBE_ASR_THREADS", "asr-threads", "speech", "decoding threads per job; 0 for one per core",
               between(0, 1024), std::to_string(sphinx.parallelism), false,
               integer(0, 1024, [](Settings& s, int v) { s.pocketsphinx.parallelism = v; })});
  t.push_back({"SCRIBE_OPENAI_ASR_URL", "openai-asr-url", "speech",
               "an OpenAI-compatible transcription server, offered as its own pipeline", "an http(s) URL", "(none)",
               false, http_url([](Settings& s, const std::string& v) { s.openai_asr.base_url = v; })});
  t.push_back({"SCRIBE_OPENAI_ASR_MODEL", "openai-asr-model", "speech", "model name sent to that server", "text",
               openai.model, false, text([](Settings& s, const std::string& v) { s.openai_asr.model = v; })});
  t.push_back({"SCRIBE_OPENAI_ASR_API_KEY", "openai-asr-api-key", "speech", "bearer key sent to that server", "text",
               "(none)", true, text([](Settings& s, const std::string& v) { s.openai_asr.api_key = v; })});
  t.push_back({"SCRIBE_OPENAI_ASR_LANGUAGES", "openai-asr-languages", "speech", "languages that pipeline offers",
               "a comma list of language codes", speech::kDefaultOpenAiAsrLanguages, false,
               [](Settings& s, const std::string& v) {
                 auto list = speech::parse_asr_languages(v);
                 if (list.empty()) throw std::invalid_argument("names no language");
                 s.openai_asr.languages = std::move(list);
               }});
  t.push_back({"SCRIBE_OPENAI_ASR_PARALLELISM", "openai-asr-parallelism", "speech",
               "concurrent requests to that server", between(1, 1024), std::to_string(openai.parallelism), false,
               integer(1, 1024, [](Settings& s, int v) { s.openai_asr.parallelism = v; })});
  // --- enrichment ---------------------------------------------------------
  t.push_back({"SCRIBE_CHAT_ENRICHMENT_URL", "chat-enrichment-url", "enrichment",
               "an OpenAI-compatible chat endpoint that rewrites enrichment's titles, summaries and answers; none: "
               "extractive only, no network",
               "an http(s) URL", "(none)", false,
               http_url([](Settings& s, const std::string& v) { s.worker.chat.base_url = v; })});
  t.push_back({"SCRIBE_CHAT_ENRICHMENT_MODEL", "chat-enrichment-model", "enrichment",
               "model name sent to that endpoint (required with the URL)", "text", "(none)", false,
               text([](Settings& s, const std::string& v) { s.worker.chat.model = v; })});
  t.push_back({"SCRIBE_CHAT_ENRICHMENT_API_KEY", "chat-enrichment-api-key", "enrichment",
               "bearer key sent to that endpoint", "text", "(none)", true,
               text([](Settings& s, const std::string& v) { s.worker.chat.api_key = v; })});
  t.push_back({"SCRIBE_CHAT_ENRICHMENT_TIMEOUT", "chat-enrichment-timeout", "enrichment",
               "seconds one chat request may take; the extractive result is kept past it", between(1, 3600),
               std::to_string(chat.timeout.count()), false,
               integer(1, 3600, [](Settings& s, int v) { s.worker.chat.timeout = std::chrono::seconds(v); })});
  t.push_back({"SCRIBE_CHAT_ENRICHMENT_MAX_SECTIONS", "chat-enrichment-max-sections", "enrichment",
               "recordings with more sections than this keep the extractive result (bounds a request's size)",
               between(1, 1000), std::to_string(chat.max_sections), false,
               integer(1, 1000, [](Settings& s, int v) { s.worker.chat.max_sections = v; })});
  // --- workers ------------------------------------------------------------
  t.push_back({"SCRIBE_WORKER_SLOTS", "worker-slots", "workers", "transcription jobs at once per process; 0 for none",
               between(0, 256), std::to_string(worker.slots), false,
               integer(0, 256, [](Settings& s, int v) { s.worker.slots = v; })});
  t.push_back({"SCRIBE_WORKER_LEASE_SECONDS", "worker-lease-seconds", "workers",
               "a killed worker's job is taken again this long after its last heartbeat", between(2, 86400),
               seconds_text(worker.lease), false,
               integer(2, 86400, [](Settings& s, int v) { s.worker.lease = std::chrono::seconds(v); })});
  t.push_back({"SCRIBE_WORKER_POLL_MS", "worker-poll-ms", "workers", "idle wait between claims when no event wakes it",
               between(10, 600'000), ms_text(worker.poll), false,
               integer(10, 600'000, [](Settings& s, int v) { s.worker.poll = std::chrono::milliseconds(v); })});
  t.push_back({"SCRIBE_CLIP_SLOTS", "clip-slots", "workers", "clip renders at once per process; 0 for none",
               between(0, 64), std::to_string(worker.clip_slots), false,
               integer(0, 64, [](Settings& s, int v) { s.worker.clip_slots = v; })});
  t.push_back({"SCRIBE_CLIP_RENDER_THREADS", "clip-render-threads", "workers",
               "FFmpeg threads per clip render; 0 for one per core", between(0, 64),
               std::to_string(worker.clip_render_threads), false,
               integer(0, 64, [](Settings& s, int v) { s.worker.clip_render_threads = v; })});
  // --- webhooks -----------------------------------------------------------
  t.push_back({"SCRIBE_WEBHOOK_SENDERS", "webhook-senders", "webhooks",
               "webhook deliveries in flight per process; 0 for none", between(0, 256),
               std::to_string(webhooks.senders), false,
               integer(0, 256, [](Settings& s, int v) { s.webhooks.senders = v; })});
  t.push_back({"SCRIBE_WEBHOOK_RETRY_DELAYS", "webhook-retry-delays", "webhooks",
               "seconds between a delivery's attempts (the spec's 1 min, 5 min, 30 min, 3 h, 12 h)",
               "a comma list of positive integers", retry_text(webhooks.retry), false,
               [](Settings& s, const std::string& v) {
                 auto parsed = webhook::RetryPolicy::parse(v, limits::kWebhookMaxAttempts);
                 if (!parsed) throw std::invalid_argument("not seconds separated by commas");
                 s.webhooks.retry = *parsed;
               }});
  t.push_back({"SCRIBE_WEBHOOK_POLL_MS", "webhook-poll-ms", "webhooks", "idle wait of a sender when no event wakes it",
               between(10, 600'000), ms_text(webhooks.poll), false,
               integer(10, 600'000, [](Settings& s, int v) { s.webhooks.poll = std::chrono::milliseconds(v); })});
  t.push_back(
      {"SCRIBE_WEBHOOK_LEASE_SECONDS", "webhook-lease-seconds", "webhooks",
       "a crashed sender's delivery is retried after this; longer than one attempt", between(min_webhook_lease, 86400),
       seconds_text(webhooks.lease), false,
       integer(min_webhook_lease, 86400, [](Settings& s, int v) { s.webhooks.lease = std::chrono::seconds(v); })});
  return t;
}

// Values that depend on others once every source is applied.
void derive(Settings& s) {
  // The build beside the sources this binary was compiled from (CMakeLists.txt).
  if (s.server.console_dir.empty()) s.server.console_dir = SCRIBE_SOURCE_CONSOLE_DIR;
  if (!s.server.public_url_given)
    s.server.public_url = "http://" + s.server.listen_host + ":" + std::to_string(s.server.listen_port);
  if (s.object_store_dir.empty()) s.object_store_dir = (std::filesystem::path(s.data_dir) / "objects").string();
  if (s.work_dir.empty()) s.work_dir = (std::filesystem::path(s.data_dir) / "work").string();
  s.worker.work_dir = s.work_dir;
  s.webhooks.public_url = s.server.public_url;
  s.pocketsphinx.vtln = s.pocketsphinx_vtln.value_or(speech::find_speech_profile(s.pocketsphinx.profile)->vtln);
  if (s.openai_asr.languages.empty())
    s.openai_asr.languages = speech::parse_asr_languages(speech::kDefaultOpenAiAsrLanguages);
}

// What a derived default came to, for `scribe config`.
std::string derived_text(const std::string& name, const Settings& s) {
  if (name == "SCRIBE_PUBLIC_URL") return s.server.public_url;
  if (name == "SCRIBE_OBJECT_STORE_DIR") return s.object_store_dir;
  if (name == "SCRIBE_CONSOLE_DIR") return s.server.console_dir;
  if (name == "SCRIBE_WORK_DIR") return s.work_dir;
  if (name == "SCRIBE_POCKETSPHINX_LM") return s.pocketsphinx.language_model_path();
  if (name == "SCRIBE_POCKETSPHINX_VTLN") return s.pocketsphinx.vtln ? "1" : "0";
  return "";
}

// The file's format: one NAME=value per line, NAME as in the environment;
// blank lines and lines starting with # are skipped; no quoting (the value is
// the rest of the line, surrounding blanks removed).
std::map<std::string, std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SettingError("configuration file " + path + " cannot be read");
  std::map<std::string, std::string> out;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = std::string(trim(line));
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    const std::string where = path + ":" + std::to_string(line_no);
    if (eq == std::string::npos) throw SettingError(where + ": expected NAME=value");
    std::string name(trim(line.substr(0, eq)));
    bool known = false;
    for (const auto& spec : setting_specs()) known = known || spec.name == name;
    if (!known) throw SettingError(where + ": unknown setting " + name);
    out[name] = std::string(trim(line.substr(eq + 1)));
  }
  return out;
}

}  // namespace

const char* source_name(Source s) {
  switch (s) {
    case Source::kDefault:
      return "default";
    case Source::kFile:
      return "file";
    case Source::kEnvironment:
      return "environment";
    case Source::kFlag:
      return "flag";
  }
  return "?";
}

const std::vector<SettingSpec>& setting_specs() {
  static const std::vector<SettingSpec> specs = make_specs();
  return specs;
}

std::vector<std::string> setting_flags() {
  std::vector<std::string> out{"config"};
  for (const auto& s : setting_specs()) out.push_back(s.flag);
  return out;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (kv.rfind("SCRIBE_", 0) == 0 && eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

LoadedSettings load_settings(const SettingSources& src) {
  LoadedSettings out;
  auto flag_it = src.flags.find("config");
  if (flag_it != src.flags.end()) out.file = flag_it->second;
  else if (auto it = src.environment.find("SCRIBE_CONFIG"); it != src.environment.end() && !it->second.empty())
    out.file = it->second;
  else out.file = src.file;
  const auto file = out.file ? read_file(*out.file) : std::map<std::string, std::string>{};
  for (const auto& spec : setting_specs()) {
    EffectiveValue v{&spec, spec.default_text, Source::kDefault};
    bool given = true;
    // Later sources win: flag over environment over file over default. An
    // empty environment variable counts as unset, as shells make them easily.
    if (auto f = src.flags.find(spec.flag); f != src.flags.end()) v = {&spec, f->second, Source::kFlag};
    else if (auto e = src.environment.find(spec.name); e != src.environment.end() && !e->second.empty())
      v = {&spec, e->second, Source::kEnvironment};
    else if (auto i = file.find(spec.name); i != file.end()) v = {&spec, i->second, Source::kFile};
    else given = false;
    // A default in <angle brackets> or (parentheses) describes what derive()
    // fills in or that the setting is off; it is not a value to parse.
    const bool derived_default =
        !given && (spec.default_text.empty() || spec.default_text[0] == '<' || spec.default_text[0] == '(');
    if (!derived_default) {
      try {
        spec.apply(out.settings, v.text);
      } catch (const std::invalid_argument& e) {
        const std::string via = v.source == Source::kFlag ? "flag --" + spec.flag : source_name(v.source);
        throw SettingError(spec.name + "='" + v.text + "' (" + via + "): " + e.what() + "; allowed: " + spec.allowed);
      }
    }
    out.values.push_back(v);
  }
  derive(out.settings);
  // The one setting that needs another: a chat endpoint without a model
  // would fail every job's request, so it stops start-up instead.
  if (!out.settings.worker.chat.base_url.empty() && out.settings.worker.chat.model.empty())
    throw SettingError(
        "SCRIBE_CHAT_ENRICHMENT_URL is set but SCRIBE_CHAT_ENRICHMENT_MODEL is not; allowed: a model "
        "name the endpoint serves");
  for (auto& v : out.values)
    if (v.source == Source::kDefault && !v.text.empty() && v.text[0] == '<')
      v.text = derived_text(v.spec->name, out.settings);
  return out;
}

std::string shown_value(const EffectiveValue& v) {
  if (!v.spec->secret || v.source == Source::kDefault) return v.text;
  // A URL's password, or the whole value of a key.
  auto scheme = v.text.find("://");
  auto at = v.text.find('@');
  if (scheme == std::string::npos) return "****";
  if (at == std::string::npos) return v.text;
  auto colon = v.text.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return v.text;
  return v.text.substr(0, colon + 1) + "****" + v.text.substr(at);
}

std::string settings_markdown() {
  std::ostringstream out;
  out << "| setting | flag | default | allowed | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& s : setting_specs()) {
    out << "| `" << s.name << "` | `--" << s.flag << "` | `" << s.default_text << "` | " << s.allowed << " | "
        << s.meaning << (s.secret ? " (secret: masked by `scribe config`)" : "") << " |\n";
  }
  return out.str();
}

std::string settings_help() {
  std::ostringstream out;
  std::string group;
  for (const auto& s : setting_specs()) {
    if (s.group != group) out << "\n" << (group = s.group) << ":\n";
    out << "  --" << s.flag << " (" << s.name << ", default " << s.default_text << ")\n      " << s.meaning << "; "
        << s.allowed << "\n";
  }
  return out.str();
}

}  // namespace scribe::app
