#pragma once
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/url_policy.h"
#include "media/media_probe.h"
#include "speech/openai_asr_engine.h"
#include "speech/pocketsphinx_engine.h"
#include "workers/webhook_dispatcher.h"
#include "workers/worker.h"

// The process configuration, loaded and validated once at start-up from
// defaults, an optional file, the environment and flags (later wins), then
// handed to the components that need it. Every setting is declared once, in
// settings.cpp's table: its name (the environment variable and the file's
// key), its flag, default, what is allowed, and its meaning. `--help`, the
// documentation table (docs/configuration.md) and `scribe config` are
// printed from that table.
namespace scribe::app {

struct Settings {
  Config server;  // the HTTP layer's part (common/config.h)
  int housekeeping_seconds = 0;
  std::string data_dir;
  std::string object_store_dir;
  std::string wordnet_dir;  // lexicon/wordnet.h
  std::string work_dir;
  UrlPolicy outbound;
  media::MediaProbeOptions media;
  speech::PocketSphinxOptions pocketsphinx;
  std::optional<bool> pocketsphinx_vtln;  // unset: the speech profile's choice
  speech::OpenAiAsrOptions openai_asr;    // base_url empty: no external pipeline
  workers::WorkerOptions worker;
  workers::DispatcherOptions webhooks;
};

// Where a setting's effective value came from.
enum class Source { kDefault, kFile, kEnvironment, kFlag };
const char* source_name(Source s);

// One row of the table.
struct SettingSpec {
  std::string name;     // SCRIBE_...: the environment variable and the file's key
  std::string flag;     // command-line flag without "--"
  std::string group;    // for the documentation: server, storage, outbound, media, speech, workers, webhooks
  std::string meaning;  // one sentence
  std::string allowed;  // what a value may be, as the refusal says it
  // The default as documented. In <angle brackets> or (parentheses) it
  // describes a value derived from others or the setting being off;
  // otherwise it is the text parsed when no source gives one.
  std::string default_text;
  bool secret = false;
  // Parses the text into the settings; throws std::invalid_argument saying
  // what is wrong with it.
  std::function<void(Settings&, const std::string&)> apply;
};
const std::vector<SettingSpec>& setting_specs();

// A setting's refusal: "SCRIBE_PORT='80x' (environment): not an integer;
// allowed: an integer from 0 to 65535".
class SettingError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct SettingSources {
  std::map<std::string, std::string> environment;  // SCRIBE_* variables
  std::map<std::string, std::string> flags;        // by flag name
  std::optional<std::string> file;                 // --config or SCRIBE_CONFIG
};

struct EffectiveValue {
  const SettingSpec* spec = nullptr;
  std::string text;  // what was parsed; for defaults, the default's text
  Source source = Source::kDefault;
};

struct LoadedSettings {
  Settings settings;
  std::vector<EffectiveValue> values;  // in table order
  std::optional<std::string> file;
};

// Throws SettingError for the first bad value, unknown key in the file, or
// unreadable file.
LoadedSettings load_settings(const SettingSources& sources);
// The SCRIBE_* variables of this process (the only reader of the environment).
std::map<std::string, std::string> process_environment();
// The flag names of the table plus "config", for a command's parser.
std::vector<std::string> setting_flags();

// `value` with secrets masked: a URL's password, a key's text.
std::string shown_value(const EffectiveValue& v);
// The documentation table (Markdown), and the options part of --help.
std::string settings_markdown();
std::string settings_help();

}  // namespace scribe::app
