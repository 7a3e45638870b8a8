#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

// WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet): what words mean
// the same, which are derived from which, and what part of speech a word
// usually is. Read once, on first use (the index files whole, about 6 MB;
// synsets from the data files by the byte offsets the index gives), and
// read-only after that, so any thread may look up. Ask's meaning-alike
// matching (enrichment/heard_terms.h) and the choice of title nouns read it.
namespace scribe::lexicon {

enum class Pos { noun, verb, adjective, adverb };

struct MeaningAlike {
  std::string word;      // lower case; a multiword lemma with spaces ("ice cream")
  double weight = 0;     // (0, 1): below the word itself
  std::string relation;  // "synonym" or "derived"
};

// Base forms of `word` as part of speech `pos` (WordNet's morphy: the
// exception lists, then the detachment rules, kept when the result is a
// lemma of that part of speech); the word itself first when it is one.
std::vector<std::string> base_forms(std::string_view word, Pos pos);

// Synonyms (the other lemmas of the synsets of the word's most frequent
// senses) and derivationally related forms ("calm" -> "calmness",
// "bake" -> "baker"), strongest first, the word itself excluded, at most
// `max`.
std::vector<MeaningAlike> meaning_alikes(std::string_view word, int max = 10);

// The share of the word's senses (tagged senses counting more) that are of
// part of speech `pos`, 0-1; 0 for a word WordNet does not have.
double pos_share(std::string_view word, Pos pos);
// All four at once, indexed by Pos; all 0 for a word WordNet does not have.
std::array<double, 4> pos_shares(std::string_view word);
bool is_noun(std::string_view word);

// The folder of the database (app/settings.cpp: SCRIBE_WORDNET_DIR). When it
// cannot be read, lookups find nothing (logged once).
void configure_wordnet(std::string dir);
bool wordnet_available();

}  // namespace scribe::lexicon
