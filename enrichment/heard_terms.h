#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "enrichment/answering.h"

// The other forms a question's words may take in a transcript made by a
// recognizer that is wrong one word in five: words that sound alike (from the
// recognizer's own pronunciation dictionary) and words that mean the same
// (WordNet's synonyms and derived forms). Which forms are tried, and how much
// each counts against the word itself, is decided here; the lookups are
// lexicon/'s, the stemming and the retrieval api/ask_retrieval's.
namespace scribe::enrichment {

// Which of the three ways past the recognizer's errors an ask uses
// (SCRIBE_ASK_MATCHING; all by default). The benchmark switches them one by
// one to report each one's contribution.
struct HeardMatching {
  bool alternates = true;
  bool sound_alikes = true;
  bool meaning_alikes = true;
};

// "alternates,sound,meaning" (any subset, any order) or "none"; throws
// std::invalid_argument naming the first word that is none of them.
HeardMatching parse_heard_matching(const std::string& text);
std::string heard_matching_text(const HeardMatching& m);

// A word to look for instead of question term `term` (an index into the
// caller's terms), and how much finding it counts (0..1).
struct VariantWord {
  std::size_t term = 0;
  std::string word;
  double factor = 0;
  Match how = Match::sound_alike;
};

// `surface[t]`: the lower-case words of the question that term t stands for
// ("baking" and "bake" both stem to "bake"). Stop words have no term and are
// never expanded. At most a few variants per term, strongest first.
std::vector<VariantWord> variant_words(const std::vector<std::vector<std::string>>& surface,
                                       const HeardMatching& matching);

// Sound-alikes of one word for the opt-in "heard" search: only close ones
// (a search result must be explainable), strongest first.
std::vector<VariantWord> search_sound_alikes(const std::string& word);

}  // namespace scribe::enrichment
