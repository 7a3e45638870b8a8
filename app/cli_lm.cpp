// `scribe lm mix`: a language model for a domain. The recognizer's Debian
// en-us model interpolated with an ARPA model of the operator's own text
// (built with, say, Debian's irstlm), written in PocketSphinx's binary
// format for SCRIBE_POCKETSPHINX_LM.
#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "speech/ngram_lm.h"
#include "speech/pocketsphinx_engine.h"

namespace scribe::app {

int lm(int argc, char** argv) {
  auto args = parse(argc, argv, 2, {"base", "other", "weight", "out"});
  if (args.help || args.positional.size() != 1 || args.positional[0] != "mix") {
    std::cout << "usage: scribe lm mix --other ARPA --weight W --out FILE [--base LM]\n\n"
                 "Interpolates the recognizer's language model (--base, by default the one the\n"
                 "workers load) with the trigram model ARPA at weight W (0 to 1; 0.1 is a\n"
                 "cautious start) and writes FILE: PocketSphinx's binary format, or ARPA when\n"
                 "FILE ends in .arpa. Point SCRIBE_POCKETSPHINX_LM at FILE to use it.\n";
    return args.help ? 0 : 2;
  }
  const auto weight = whole_number(args.require("weight"));
  if (!weight || !(*weight >= 0 && *weight <= 1)) throw std::invalid_argument("--weight must be a number from 0 to 1");
  const std::string base = args.get("base").value_or(load_settings(args).settings.pocketsphinx.language_model_path());
  const std::string out = args.require("out");
  const std::string other = args.require("other");

  auto a = speech::read_sphinx_trie(base);
  auto b = speech::read_arpa(other);
  auto mixed = speech::interpolate(a, b, *weight);
  std::cerr << "mixed " << base << " (" << a.count(1) << " words) with " << other << " (" << b.count(1) << " words) at "
            << *weight << ": " << mixed.count(1) << " words, " << mixed.count(2) << " bigrams, " << mixed.count(3)
            << " trigrams\n";
  if (std::filesystem::path(out).extension() == ".arpa") {
    speech::write_arpa(mixed, out);
    return 0;
  }
  // sphinxbase writes its binary format only from a model it read itself.
  const std::string arpa = out + ".tmp.arpa";
  try {
    speech::write_arpa(mixed, arpa);
    speech::write_sphinx_trie(arpa, out);
  } catch (...) {
    std::filesystem::remove(arpa);
    throw;
  }
  std::filesystem::remove(arpa);
  return 0;
}

}  // namespace scribe::app
