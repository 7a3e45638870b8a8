#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/settings.h"

// Command-line parsing shared by the subcommands: positional words and
// --name value / --name=value options. Unknown options are an error.
namespace scribe::app {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool help = false;

  std::optional<std::string> get(const std::string& name) const;
  std::string require(const std::string& name) const;
  bool flag(const std::string& name) const { return options.count(name) > 0; }
};

// `s` as a number when all of it is one (std::stod alone accepts "0.5abc").
std::optional<double> whole_number(const std::string& s);

// `allowed` lists option names (without --); boolean flags may be given alone.
Args parse(int argc, char** argv, int first, const std::vector<std::string>& allowed);
// The settings (app/settings.h) from the environment, the file and the
// setting flags among `args`; throws SettingError naming a bad one.
LoadedSettings load_settings(const Args& args);
// The process-wide object store and upload staging folder, configured once
// before any thread uses them, by every command that reads or writes objects.
void configure_storage(const Settings& settings);
// Every command accepts the settings' flags and --config FILE.
extern const char* kCommonHelp;

int serve(int argc, char** argv);
int worker(int argc, char** argv);
int migrate(int argc, char** argv);
int projections(int argc, char** argv);
int audit(int argc, char** argv);
int admin(int argc, char** argv);
int routes(int argc, char** argv);
int transcribe(int argc, char** argv);
int lm(int argc, char** argv);
int config(int argc, char** argv);

}  // namespace scribe::app
