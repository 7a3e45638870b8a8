// `scribe config`: the effective configuration and where each value came from.
#include <iomanip>
#include <iostream>

#include "app/cli.h"

namespace scribe::app {

int config(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"check", "markdown"});
  if (args.help) {
    std::cout << "usage: scribe config [--check] [--markdown] [--config FILE] [setting flags]\n"
                 "\n"
                 "Prints the effective configuration as NAME=value lines, each with where its\n"
                 "value came from (default, file, environment, flag); secrets are masked.\n"
                 "  --check      only validate: exit 0 when every setting is valid, else name the\n"
                 "               first bad one and exit 2\n"
                 "  --markdown   print the settings table of docs/configuration.md\n"
                 "\n"
                 "Settings:\n"
              << settings_help();
    return 0;
  }
  if (args.flag("markdown")) {
    std::cout << settings_markdown();
    return 0;
  }
  const LoadedSettings loaded = load_settings(args);
  if (args.flag("check")) {
    std::cout << "configuration ok" << (loaded.file ? " (file " + *loaded.file + ")" : std::string()) << "\n";
    return 0;
  }
  std::cout << "# file: " << loaded.file.value_or("none") << "\n";
  for (const auto& v : loaded.values) {
    const std::string line = v.spec->name + "=" + shown_value(v);
    std::cout << std::left << std::setw(64) << line << " # " << source_name(v.source) << "\n";
  }
  return 0;
}

}  // namespace scribe::app
