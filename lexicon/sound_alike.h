#pragma once
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "lexicon/pronunciations.h"

// Words that sound alike, by the recognizer's own pronunciations
// (lexicon/pronunciations.h): what PocketSphinx writes instead of a word it
// mishears is, most often, a word whose phones are close to it ("moat" ->
// "most", "coral" -> "carl"). The distance is a weighted edit distance over
// phones, divided by the longer pronunciation's length. docs/heard_matching.md.
namespace scribe::lexicon {

// Weighted phone edit distance of two pronunciations (not normalised).
double phone_distance(const std::vector<Phone>& a, const std::vector<Phone>& b);

// The normalised distance of two words: the least over their
// pronunciations of phone_distance / the longer one's phone count; infinity
// when either word is not in the dictionary.
double phonetic_distance(std::string_view a, std::string_view b);

struct SoundAlike {
  std::string word;
  double distance = 0;  // normalised, as phonetic_distance
  double weight = 0;    // 1 for a homophone, 0.5 at max_distance, linear between
};

// The default bound on the normalised distance: about one phone in four
// changed by a cheap substitution, or one in six inserted.
inline constexpr double kSoundAlikeMaxDistance = 0.3;

// Dictionary words that sound like `word` (lower case), closest first, the
// word itself excluded, at most `max`; empty for a word the dictionary does
// not have. Only pronunciations within a third of the word's phone count
// (at least one phone) of its own length are considered.
std::vector<SoundAlike> sound_alikes(std::string_view word, int max = 8, double max_distance = kSoundAlikeMaxDistance);

}  // namespace scribe::lexicon
