#include <cstring>
#include <iostream>

#include "app/cli.h"

namespace {

const char* kUsage =
    "scribe: self-hosted transcription service\n"
    "\n"
    "usage: scribe <command> [options]\n"
    "\n"
    "commands:\n"
    "  serve         HTTP API, projectors and background roles in one process\n"
    "  worker        background roles only (projectors, pipeline workers), no HTTP\n"
    "  migrate       apply database migrations\n"
    "  projections   list projections, or rebuild NAME|all from the event log\n"
    "  audit         replay wallet and billing events and compare with projections\n"
    "  admin         accounts, plans, API keys and wallet top-ups\n"
    "  routes        print every route the HTTP server serves\n"
    "  transcribe    run the speech pipeline on a local file (no database)\n"
    "  lm            build a domain language model for the recognizer\n"
    "  config        print the effective configuration, or --check it\n"
    "\n"
    "Run 'scribe <command> --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "serve") return scribe::app::serve(argc, argv);
    if (cmd == "worker") return scribe::app::worker(argc, argv);
    if (cmd == "migrate") return scribe::app::migrate(argc, argv);
    if (cmd == "projections") return scribe::app::projections(argc, argv);
    if (cmd == "audit") return scribe::app::audit(argc, argv);
    if (cmd == "admin") return scribe::app::admin(argc, argv);
    if (cmd == "routes") return scribe::app::routes(argc, argv);
    if (cmd == "transcribe") return scribe::app::transcribe(argc, argv);
    if (cmd == "lm") return scribe::app::lm(argc, argv);
    if (cmd == "config") return scribe::app::config(argc, argv);
  } catch (const std::invalid_argument& err) {
    std::cerr << "scribe " << cmd << ": " << err.what() << "\n(see 'scribe " << cmd << " --help')\n";
    return 2;
  } catch (const std::exception& err) {
    std::cerr << "scribe " << cmd << ": " << err.what() << "\n";
    return 1;
  }
  std::cerr << "scribe: unknown command '" << cmd << "'\n\n" << kUsage;
  return 2;
}
