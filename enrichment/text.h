#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// The word-level text tools enrichment is built on: a tokenizer for the cased,
// punctuated segment text the sentence builder writes, an English stop-word
// list, a list of the words speech is full of but that never name a topic,
// the Porter stemmer, and the rendering of a phrase as a title. Pure
// functions, no locale.
namespace scribe::enrichment {

// One word of a text: lower-cased, with where it sits in the original bytes so
// that callers can quote the text around it verbatim.
struct Token {
  std::string text;   // lower-case ASCII letters and digits, inner apostrophes ("don't")
  std::size_t begin;  // byte offset of the first character in the source
  std::size_t end;    // one past the last byte
};

// Words are runs of ASCII letters, digits and apostrophes; the typographic
// apostrophe U+2019 (what cloud recognizers write in "don’t") counts as one
// and comes out as "'". Apostrophes at either end of a word are dropped
// ("'cause" -> "cause", "players'" -> "players"). Any other byte, including
// every other UTF-8 sequence, separates words: the recognizer writes English
// in ASCII, and a stray accented word only loses its accented letters.
std::vector<Token> tokenize(std::string_view text);

// Just the lower-cased words of `text`.
std::vector<std::string> words(std::string_view text);

// Function words of English (articles, pronouns, auxiliaries, prepositions,
// conjunctions, common adverbs), lower-case, with the contractions.
bool is_stop_word(std::string_view lower_word);

// Words that are not function words but that speech uses everywhere without
// naming what it is about: fillers ("um", "yeah"), hedges ("basically"),
// light verbs ("get", "going", "think") and vague nouns ("thing", "lot").
// They never start or end a title and carry no weight in topic vectors.
bool is_filler_word(std::string_view lower_word);

// Adjectives, adverbs and verbs so common in speech ("different", "long",
// "final", "usually", "melt") that a phrase ending in one never names a
// subject: "deep sleep" is a keyphrase, "sleep deep" and "different" are not.
// Words ending in "-ly" (six letters or more) or "-ed" (five or more) count,
// except a few nouns ("family", "speed", "hundred").
bool is_weak_head(std::string_view lower_word);

// The Porter (1980) stemmer, with the two corrections Porter published later
// for his reference implementation (step 2 "bli" -> "ble" in place of "abli"
// -> "able", and "logi" -> "log"). Input is one lower-case word; words of two
// letters or fewer, and words with anything but a-z, are returned unchanged.
std::string porter_stem(std::string_view lower_word);

// Numbers, in words ("two", "hundred", "first") or digits.
bool is_number_word(std::string_view lower_word);
// One or more digits and nothing else ("1969").
bool is_digits(std::string_view word);
// Small words that Title Case keeps lower-case inside a title.
bool is_title_small_word(std::string_view lower_word);

// `words` (surface forms) joined in Title Case: every word's first letter
// upper-cased except the small words inside the title; a word that already
// holds an upper-case letter ("NASA", "iPhone") is kept as written.
std::string title_case(const std::vector<std::string>& words);

// `text` cut to at most `max_bytes` bytes at a word boundary (never inside a
// word or a UTF-8 sequence), trailing punctuation and blanks removed. A text
// that fits is returned unchanged; a single word longer than the limit is cut
// at the last whole UTF-8 character that fits.
std::string cut_at_word(std::string_view text, std::size_t max_bytes);

}  // namespace scribe::enrichment
