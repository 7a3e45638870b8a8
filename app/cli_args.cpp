#include <stdexcept>

#include "app/cli.h"
#include "lexicon/pronunciations.h"
#include "lexicon/wordnet.h"
#include "api/upload_store.h"
#include "common/object_store.h"

namespace scribe::app {

const char* kCommonHelp =
    "  --config FILE        settings file (NAME=value lines; env SCRIBE_CONFIG)\n"
    "  --database-url URL   PostgreSQL connection URL (env SCRIBE_DATABASE_URL)\n"
    "  --log-level LEVEL    debug, info, warn or error (env SCRIBE_LOG_LEVEL)\n"
    "  and every other setting's flag: see `scribe config --help` or docs/configuration.md\n";

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

std::string Args::require(const std::string& name) const {
  auto v = get(name);
  if (!v || v->empty()) throw std::invalid_argument("missing --" + name);
  return *v;
}

std::optional<double> whole_number(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

Args parse(int argc, char** argv, int first, const std::vector<std::string>& allowed) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--help" || s == "-h") {
      a.help = true;
      continue;
    }
    if (s.rfind("--", 0) != 0) {
      a.positional.push_back(s);
      continue;
    }
    std::string name = s.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    bool known = false;
    for (const auto& n : allowed) known = known || n == name;
    for (const auto& n : setting_flags()) known = known || n == name;
    if (!known) throw std::invalid_argument("unknown option --" + name);
    if (!has_value && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      value = argv[++i];
    }
    a.options[name] = value;
  }
  return a;
}

void configure_storage(const Settings& s) {
  configure_object_store(s.object_store_dir);
  api::uploads::configure_staging(s.work_dir);
  // Ask's sound-alikes come from the dictionary the recognizer decodes with.
  lexicon::configure_pronunciations(s.pocketsphinx.model_dir + "/cmudict-en-us.dict");
  lexicon::configure_wordnet(s.wordnet_dir);
}

LoadedSettings load_settings(const Args& args) {
  SettingSources sources;
  sources.environment = process_environment();
  for (const auto& flag : setting_flags())
    if (auto v = args.get(flag)) sources.flags[flag] = *v;
  return load_settings(sources);
}

}  // namespace scribe::app
