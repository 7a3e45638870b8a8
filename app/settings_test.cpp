#include "app/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "domain/limits.h"

namespace scribe::app {
namespace {

LoadedSettings load_env(std::map<std::string, std::string> env, std::map<std::string, std::string> flags = {}) {
  return load_settings(SettingSources{std::move(env), std::move(flags), std::nullopt});
}

std::string refusal(std::map<std::string, std::string> env, std::map<std::string, std::string> flags = {}) {
  try {
    load_env(std::move(env), std::move(flags));
  } catch (const SettingError& e) {
    return e.what();
  }
  return "";
}

const EffectiveValue& value_of(const LoadedSettings& l, const std::string& name) {
  for (const auto& v : l.values)
    if (v.spec->name == name) return v;
  throw std::logic_error("no setting " + name);
}

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/scribe-settings-XXXXXX";
  int fd = mkstemp(name);
  ::close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(Settings, DefaultsAreTheComponentsOwn) {
  const auto l = load_env({});
  const Settings& s = l.settings;
  EXPECT_EQ(s.server.listen_port, 8080);
  EXPECT_EQ(s.server.rate_limit_per_minute, limits::kRequestsPerMinute);
  EXPECT_EQ(s.server.console_rate_limit_per_minute, limits::kConsoleRequestsPerMinute);
  // The web console's build beside the sources this binary came from.
  EXPECT_TRUE(s.server.console_dir.ends_with("/console/dist")) << s.server.console_dir;
  EXPECT_FALSE(s.server.support_text.empty());
  EXPECT_EQ(s.server.public_url, "http://127.0.0.1:8080");
  EXPECT_FALSE(s.server.public_url_given);
  EXPECT_EQ(s.object_store_dir, "data/objects");
  EXPECT_EQ(s.work_dir, "data/work");
  EXPECT_EQ(s.worker.work_dir, "data/work");
  EXPECT_EQ(s.worker.slots, workers::WorkerOptions{}.slots);
  EXPECT_EQ(s.webhooks.lease, workers::DispatcherOptions{}.lease);
  EXPECT_EQ(s.webhooks.retry.delays, workers::DispatcherOptions{}.retry.delays);
  EXPECT_EQ(s.media.ffprobe_timeout, media::MediaProbeOptions{}.ffprobe_timeout);
  EXPECT_EQ(s.pocketsphinx.profile, "balanced");
  EXPECT_TRUE(s.pocketsphinx.vtln);
  EXPECT_TRUE(s.openai_asr.base_url.empty());
  EXPECT_EQ(s.openai_asr.languages.size(), 10u);
  EXPECT_FALSE(s.outbound.allow_private);
  EXPECT_EQ(l.values.size(), setting_specs().size());
  for (const auto& v : l.values) EXPECT_EQ(v.source, Source::kDefault) << v.spec->name;
  // Derived defaults show what they came to.
  EXPECT_EQ(value_of(l, "SCRIBE_WORK_DIR").text, "data/work");
  EXPECT_EQ(value_of(l, "SCRIBE_POCKETSPHINX_VTLN").text, "1");
}

TEST(Settings, FlagBeatsEnvironmentBeatsFileBeatsDefault) {
  const std::string file = temp_file(
      "# a comment\n\nSCRIBE_PORT = 7000\nSCRIBE_IO_THREADS=3\nSCRIBE_DB_POOL=5\nSCRIBE_ALLOW_PRIVATE_URLS=yes\n");
  SettingSources src{
      {{"SCRIBE_CONFIG", file}, {"SCRIBE_PORT", "7100"}, {"SCRIBE_IO_THREADS", "4"}}, {{"port", "7200"}}, std::nullopt};
  const auto l = load_settings(src);
  EXPECT_EQ(l.file, file);
  EXPECT_EQ(l.settings.server.listen_port, 7200);
  EXPECT_EQ(value_of(l, "SCRIBE_PORT").source, Source::kFlag);
  EXPECT_EQ(l.settings.server.io_threads, 4);
  EXPECT_EQ(value_of(l, "SCRIBE_IO_THREADS").source, Source::kEnvironment);
  EXPECT_EQ(l.settings.server.db_pool_size, 5);
  EXPECT_EQ(value_of(l, "SCRIBE_DB_POOL").source, Source::kFile);
  EXPECT_TRUE(l.settings.outbound.allow_private);
  EXPECT_EQ(value_of(l, "SCRIBE_RATE_LIMIT_PER_MINUTE").source, Source::kDefault);
  // --config names another file than SCRIBE_CONFIG.
  const std::string other = temp_file("SCRIBE_DB_POOL=6\n");
  src.flags["config"] = other;
  EXPECT_EQ(load_settings(src).settings.server.db_pool_size, 6);
  ::unlink(file.c_str());
  ::unlink(other.c_str());
}

TEST(Settings, EmptyEnvironmentVariableCountsAsUnset) {
  EXPECT_EQ(load_env({{"SCRIBE_PORT", ""}}).settings.server.listen_port, 8080);
}

TEST(Settings, DerivedValuesFollowTheirSources) {
  const auto s = load_env({{"SCRIBE_DATA_DIR", "/srv/scribe"},
                           {"SCRIBE_LISTEN_HOST", "0.0.0.0"},
                           {"SCRIBE_PORT", "9000"},
                           {"SCRIBE_SPEECH_PROFILE", "live"}})
                     .settings;
  EXPECT_EQ(s.object_store_dir, "/srv/scribe/objects");
  EXPECT_EQ(s.work_dir, "/srv/scribe/work");
  EXPECT_EQ(s.server.public_url, "http://0.0.0.0:9000");
  EXPECT_FALSE(s.pocketsphinx.vtln);  // the live profile's choice
  EXPECT_TRUE(
      load_env({{"SCRIBE_SPEECH_PROFILE", "live"}, {"SCRIBE_POCKETSPHINX_VTLN", "1"}}).settings.pocketsphinx.vtln);
  const auto given = load_env({{"SCRIBE_PUBLIC_URL", "https://scribe.example"}}).settings.server;
  EXPECT_EQ(given.public_url, "https://scribe.example");
  EXPECT_TRUE(given.public_url_given);
}

// The public URL is the OAuth issuer and the base of every resource and
// metadata URL, so it must be an origin: a path would make the well-known
// locations ambiguous (RFC 8414 3.1, RFC 9728 3.1). One trailing slash is
// dropped and the origin is written as browsers serialize it.
TEST(Settings, ThePublicUrlIsAnOriginWithoutAPath) {
  EXPECT_EQ(load_env({{"SCRIBE_PUBLIC_URL", "https://scribe.example/"}}).settings.server.public_url,
            "https://scribe.example");
  EXPECT_EQ(load_env({{"SCRIBE_PUBLIC_URL", "HTTPS://Scribe.Example:443"}}).settings.server.public_url,
            "https://scribe.example");
  EXPECT_EQ(load_env({{"SCRIBE_PUBLIC_URL", "http://127.0.0.1:8080"}}).settings.server.public_url,
            "http://127.0.0.1:8080");
  for (const char* bad : {"https://scribe.example/scribe", "https://scribe.example/api/", "https://scribe.example?x=1",
                          "https://scribe.example/#top", "https://user@scribe.example"}) {
    const std::string why = refusal({{"SCRIBE_PUBLIC_URL", bad}});
    EXPECT_NE(why.find("no path"), std::string::npos) << bad << ": " << why;
  }
}

TEST(Settings, ListsAndWordsParse) {
  const auto s = load_env({{"SCRIBE_ALLOWED_PRIVATE_ENDPOINTS", "127.0.0.1:1, [::1]:2,"},
                           {"SCRIBE_OPENAI_ASR_URL", "http://gpu-box:8000"},
                           {"SCRIBE_OPENAI_ASR_LANGUAGES", " en, DE ,,fr"},
                           {"SCRIBE_OPENAI_ASR_PARALLELISM", "4"},
                           {"SCRIBE_POCKETSPHINX_ARGS", "-beam 1e-40  -pbeam 1e-30"},
                           {"SCRIBE_WEBHOOK_RETRY_DELAYS", "1,2,3"}})
                     .settings;
  EXPECT_EQ(s.outbound.allowed_private_endpoints, (std::vector<std::string>{"127.0.0.1:1", "[::1]:2"}));
  EXPECT_EQ(s.openai_asr.base_url, "http://gpu-box:8000");
  EXPECT_EQ(s.openai_asr.languages, (std::vector<std::string>{"en", "de", "fr"}));
  EXPECT_EQ(s.openai_asr.parallelism, 4);
  EXPECT_EQ(s.openai_asr.api_key, std::nullopt);
  EXPECT_EQ(s.pocketsphinx.extra_args, (std::vector<std::string>{"-beam", "1e-40", "-pbeam", "1e-30"}));
  EXPECT_EQ(s.webhooks.retry.delays.size(), 3u);
}

// One bad value per setting: each is refused with its name, the value, where
// it came from and what is allowed. A setting added to the table without a
// refusal here fails the last check.
TEST(Settings, EveryRefusalNamesTheSettingTheValueAndWhatIsAllowed) {
  const std::map<std::string, std::string> bad = {
      {"SCRIBE_DATABASE_URL", "mysql://x"},
      {"SCRIBE_LISTEN_HOST", ""},
      {"SCRIBE_PORT", "80x"},
      {"SCRIBE_PUBLIC_URL", "ftp://x"},
      {"SCRIBE_MCP_ALLOWED_ORIGINS", "https://console.example/app"},
      {"SCRIBE_IO_THREADS", "0"},
      {"SCRIBE_DB_POOL", "1e3"},
      {"SCRIBE_RATE_LIMIT_PER_MINUTE", "0"},
      {"SCRIBE_CONSOLE_RATE_LIMIT_PER_MINUTE", "0"},
      {"SCRIBE_CONSOLE_DIR", ""},
      {"SCRIBE_SUPPORT_TEXT", ""},
      {"SCRIBE_MEDIA_LINK_TTL_SECONDS", "0"},
      {"SCRIBE_ASK_MATCHING", "alternates,rhymes"},
      {"SCRIBE_LOG_LEVEL", "loud"},
      {"SCRIBE_METRICS_ADDR", "9464"},
      {"SCRIBE_HOUSEKEEPING_SECONDS", "-1"},
      {"SCRIBE_OPENAI_DEDUPE_SECONDS", "86401"},
      {"SCRIBE_REALTIME_STALE_SECONDS", "1"},
      {"SCRIBE_REALTIME_TICKET_TTL_SECONDS", "61"},
      {"SCRIBE_REALTIME_IDLE_SECONDS", "0"},
      {"SCRIBE_REALTIME_HEARTBEAT_SECONDS", "61"},
      {"SCRIBE_REALTIME_MAX_AHEAD_SECONDS", "1"},
      {"SCRIBE_REALTIME_THREADS", "0"},
      {"SCRIBE_OAUTH_ACCESS_TTL_SECONDS", "0"},
      {"SCRIBE_OAUTH_CODE_TTL_SECONDS", "601"},
      {"SCRIBE_OAUTH_CIMD_ALLOW_PRIVATE", "perhaps"},
      {"SCRIBE_PASSWORD_HASH_COST_LOG2", "21"},
      {"SCRIBE_DATA_DIR", ""},
      {"SCRIBE_OBJECT_STORE_DIR", ""},
      {"SCRIBE_WORDNET_DIR", ""},
      {"SCRIBE_WORK_DIR", ""},
      {"SCRIBE_ALLOW_PRIVATE_URLS", "maybe"},
      {"SCRIBE_ALLOWED_PRIVATE_ENDPOINTS", "media.internal"},
      {"SCRIBE_OUTBOUND_CA_FILE", "/nonexistent/ca.pem"},
      {"SCRIBE_YTDLP", ""},
      {"SCRIBE_FFPROBE", ""},
      {"SCRIBE_MEDIA_DOWNLOAD_TIMEOUT_SECONDS", "0"},
      {"SCRIBE_YTDLP_TIMEOUT_SECONDS", "86401"},
      {"SCRIBE_FFPROBE_TIMEOUT_SECONDS", "ten"},
      {"SCRIBE_SPEECH_PROFILE", "fastest"},
      {"SCRIBE_POCKETSPHINX_MODEL_DIR", ""},
      {"SCRIBE_POCKETSPHINX_LM", ""},
      {"SCRIBE_POCKETSPHINX_ARGS", "-beam"},
      {"SCRIBE_POCKETSPHINX_VTLN", "2"},
      {"SCRIBE_ASR_THREADS", "many"},
      {"SCRIBE_OPENAI_ASR_URL", "gpu-box:8000"},
      {"SCRIBE_OPENAI_ASR_MODEL", ""},
      {"SCRIBE_OPENAI_ASR_API_KEY", ""},
      {"SCRIBE_OPENAI_ASR_LANGUAGES", " , "},
      {"SCRIBE_OPENAI_ASR_PARALLELISM", "0"},
      {"SCRIBE_CHAT_ENRICHMENT_URL", "llm-box:8000"},
      {"SCRIBE_CHAT_ENRICHMENT_MODEL", ""},
      {"SCRIBE_CHAT_ENRICHMENT_API_KEY", ""},
      {"SCRIBE_CHAT_ENRICHMENT_TIMEOUT", "0"},
      {"SCRIBE_CHAT_ENRICHMENT_MAX_SECTIONS", "1001"},
      {"SCRIBE_WORKER_SLOTS", "-1"},
      {"SCRIBE_WORKER_LEASE_SECONDS", "1"},
      {"SCRIBE_WORKER_POLL_MS", "5"},
      {"SCRIBE_CLIP_SLOTS", "65"},
      {"SCRIBE_CLIP_RENDER_THREADS", "-1"},
      {"SCRIBE_WEBHOOK_SENDERS", "x"},
      {"SCRIBE_WEBHOOK_RETRY_DELAYS", "1,,x"},
      {"SCRIBE_WEBHOOK_POLL_MS", "600001"},
      {"SCRIBE_WEBHOOK_LEASE_SECONDS", std::to_string(limits::kWebhookTimeoutSeconds)},
  };
  std::set<std::string> covered;
  for (const auto& spec : setting_specs()) {
    auto it = bad.find(spec.name);
    if (it == bad.end()) continue;
    covered.insert(spec.name);
    // Empty values are given as flags: an empty environment variable is unset.
    const std::string why = it->second.empty() ? refusal({}, {{spec.flag, ""}}) : refusal({{spec.name, it->second}});
    SCOPED_TRACE(spec.name);
    ASSERT_FALSE(why.empty()) << "accepted '" << it->second << "'";
    EXPECT_EQ(why.rfind(spec.name + "='" + it->second + "'", 0), 0u) << why;
    EXPECT_NE(why.find(it->second.empty() ? "(flag --" + spec.flag + ")" : "(environment)"), std::string::npos) << why;
    EXPECT_NE(why.find("; allowed: " + spec.allowed), std::string::npos) << why;
  }
  EXPECT_EQ(covered.size(), setting_specs().size());
}

TEST(Settings, FileProblemsAreRefused) {
  auto from_file = [](const std::string& text) -> std::string {
    const std::string f = temp_file(text);
    std::string why;
    try {
      load_settings(SettingSources{{}, {{"config", f}}, std::nullopt});
    } catch (const SettingError& e) {
      why = e.what();
    }
    ::unlink(f.c_str());
    return why;
  };
  EXPECT_NE(from_file("SCRIBE_PORTT=1\n").find(":1: unknown setting SCRIBE_PORTT"), std::string::npos);
  EXPECT_NE(from_file("# ok\nport 8080\n").find(":2: expected NAME=value"), std::string::npos);
  EXPECT_NE(from_file("SCRIBE_PORT=99999\n").find("SCRIBE_PORT='99999' (file)"), std::string::npos);
  EXPECT_EQ(from_file("SCRIBE_PORT=9999\n"), "");
  EXPECT_THROW(load_settings(SettingSources{{}, {{"config", "/nonexistent/scribe.conf"}}, std::nullopt}), SettingError);
}

TEST(Settings, SecretsAreMasked) {
  const auto l = load_env({{"SCRIBE_DATABASE_URL", "postgresql://scribe:hunter2@db:5432/scribe"},
                           {"SCRIBE_OPENAI_ASR_API_KEY", "sk-secret"}});
  EXPECT_EQ(shown_value(value_of(l, "SCRIBE_DATABASE_URL")), "postgresql://scribe:****@db:5432/scribe");
  EXPECT_EQ(shown_value(value_of(l, "SCRIBE_OPENAI_ASR_API_KEY")), "****");
  EXPECT_EQ(l.settings.server.database_url, "postgresql://scribe:hunter2@db:5432/scribe");
  EXPECT_EQ(l.settings.openai_asr.api_key, "sk-secret");
  const auto no_password = load_env({{"SCRIBE_DATABASE_URL", "postgresql://scribe@db/scribe"}});
  EXPECT_EQ(shown_value(value_of(no_password, "SCRIBE_DATABASE_URL")), "postgresql://scribe@db/scribe");
}

TEST(Settings, HelpAndTableComeFromTheDeclaration) {
  const std::string md = settings_markdown(), help = settings_help();
  std::set<std::string> names, flags;
  for (const auto& s : setting_specs()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate " << s.name;
    EXPECT_TRUE(flags.insert(s.flag).second) << "duplicate --" << s.flag;
    EXPECT_NE(md.find("| `" + s.name + "` | `--" + s.flag + "` | `" + s.default_text + "` |"), std::string::npos);
    EXPECT_NE(help.find("--" + s.flag + " (" + s.name + ", default " + s.default_text + ")"), std::string::npos);
  }
}

TEST(Settings, ChatEnrichmentIsOffByDefaultAndNeedsAModelWhenOn) {
  EXPECT_TRUE(load_env({}).settings.worker.chat.base_url.empty());
  const auto on = load_env({{"SCRIBE_CHAT_ENRICHMENT_URL", "http://127.0.0.1:8000/v1"},
                            {"SCRIBE_CHAT_ENRICHMENT_MODEL", "local-model"},
                            {"SCRIBE_CHAT_ENRICHMENT_TIMEOUT", "30"}});
  EXPECT_EQ(on.settings.worker.chat.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(on.settings.worker.chat.model, "local-model");
  EXPECT_EQ(on.settings.worker.chat.timeout, std::chrono::seconds(30));
  EXPECT_NE(refusal({{"SCRIBE_CHAT_ENRICHMENT_URL", "http://127.0.0.1:8000"}}).find("SCRIBE_CHAT_ENRICHMENT_MODEL"),
            std::string::npos);
  EXPECT_NE(refusal({{"SCRIBE_CHAT_ENRICHMENT_URL", "ftp://x"}}).find("SCRIBE_CHAT_ENRICHMENT_URL='ftp://x'"),
            std::string::npos);
  EXPECT_NE(refusal({{"SCRIBE_CHAT_ENRICHMENT_TIMEOUT", "0"}}).find("from 1 to 3600"), std::string::npos);
}

}  // namespace
}  // namespace scribe::app
