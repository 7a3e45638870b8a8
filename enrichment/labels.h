#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "enrichment/corpus.h"

// What a stretch of the transcript is about and how it is labelled: its terms
// weighted against the whole transcript, its keyphrases and the titles made
// from them (keyphrase.cpp), and its extractive summary (summary.cpp): the
// sentences closest to what the stretch as a whole is about (centroid
// similarity over its weighted terms), chosen so that the second does not
// repeat the first (maximal marginal relevance), quoted verbatim.
namespace scribe::enrichment {

// Terms a regeneration's refine prompt asks for: whatever contains them is
// preferred (weights multiplied by 1 + boost).
struct Steering {
  std::vector<int> terms;  // corpus term ids, sorted
  double boost = 1.5;
  bool has(int term) const;
  bool empty() const { return terms.empty(); }
};

// The steering terms of a prompt: its content words, stemmed, that the
// transcript uses. Empty when the prompt is absent or names nothing in it.
Steering steering_from_prompt(const Corpus& corpus, const std::string* prompt);

// Each term of a span weighted by tf * idf * sqrt(focus), where focus is the
// share of the term's occurrences in the whole transcript that fall in the
// span: a word the whole recording repeats (its overall subject) names no
// single section, a word only this section uses names it well.
struct SpanTerms {
  std::unordered_map<int, double> weight;
  double norm = 0;      // Euclidean norm of the weights
  double salience = 0;  // sum of the 8 largest weights: how much distinct content the span has
  int content_words = 0;
};

SpanTerms span_terms(const Corpus& corpus, const Span& span, const Steering& steering);

// A candidate phrase: up to four content words in a row within a sentence,
// with at most two small connecting words inside ("history of the empire").
struct Keyphrase {
  std::vector<int> forms;  // how it is written most often, word by word (form ids)
  std::vector<bool> hyphen_before;
  std::vector<int> terms;  // its content terms, sorted and unique
  int count = 0;           // occurrences in the span
  int first_sentence = 0;  // sentence index of its first occurrence
  double score = 0;
  bool proper = false;  // every content word is a name
};

// The span's keyphrases, best first, at most `limit`, none sharing a content
// term with a better one ("black holes" hides "holes").
std::vector<Keyphrase> keyphrases(const Corpus& corpus, const Span& span, const SpanTerms& terms,
                                  const Steering& steering, int limit = 8);

// The phrase as written, lower-case except names ("black holes", "NASA budget").
std::string phrase_text(const Corpus& corpus, const Keyphrase& phrase);
// The phrase's words in title form, before Title Case.
std::vector<std::string> phrase_words(const Corpus& corpus, const Keyphrase& phrase);

// What a title is made of first: the best keyphrase when it has two words
// or more ("Interest Rates"), else the best two joined ("Magma and Ash"); or,
// for spans that join several topics (acts), the best two joined first.
enum class TitleShape { kPhrase, kPair };

// Titles that read as titles: 2-6 words in Title Case, neither starting nor
// ending with a stop word or filler, at most 80 characters cut at a word, and
// no two alike (case-insensitively) in the list. `phrases[i]` are span i's
// keyphrases; `index_hint[i]` numbers a span that has none ("Part 3").
// When the first choice is taken, the other phrases and pairs come next (two
// sections on one subject get told apart by what else they say), then
// "<title> Part N".
std::vector<std::string> make_titles(const Corpus& corpus, const std::vector<std::vector<Keyphrase>>& phrases,
                                     const std::vector<int>& index_hint, TitleShape shape = TitleShape::kPhrase);

// A title from one keyphrase list, unique against `taken` (lower-case titles
// already used, which it extends).
std::string unique_title(const Corpus& corpus, const std::vector<Keyphrase>& phrases, int index_hint,
                         std::vector<std::string>& taken, TitleShape shape = TitleShape::kPhrase);

// A headline made of the sentence's own words: the run of 2-6 words within
// one clause, starting where a run of content words starts and ending on a
// content word, at least half of them content words, that carries the most
// weight in `context` (the terms of the sentence's section): "Fresh pasta
// cooks much faster than dried pasta, usually ..." -> "Fresh Pasta Cooks Much
// Faster". Unique against `taken` (which it extends); empty when the sentence
// has no such run.
std::string sentence_headline(const Corpus& corpus, int sentence, const SpanTerms& context,
                              std::vector<std::string>& taken);

inline constexpr std::size_t kMaxTitleBytes = 80;
inline constexpr std::size_t kMaxTitleWords = 6;

// --- Summaries (summary.cpp) ---

// How central each sentence of the span is, 0..1, in the span's sentence
// order: the cosine between the sentence's idf-weighted terms and the span's
// term weights, lowered for sentences too short to say anything (fewer than
// six content words), very long ones, and questions, and raised when the
// sentence holds steering terms.
std::vector<double> sentence_scores(const Corpus& corpus, const Span& span, const SpanTerms& terms,
                                    const Steering& steering);

// Cosine similarity of two sentences' idf-weighted terms.
double sentence_similarity(const Corpus& corpus, int a, const int b);

// Up to `count` sentence indices (into corpus.sentences()) chosen by maximal
// marginal relevance from `scores` (aligned with the sentences starting at
// `first_sentence`), most important first. Sentences with a score of 0 are
// never chosen.
std::vector<int> pick_sentences(const Corpus& corpus, int first_sentence, const std::vector<double>& scores, int count);

// The chosen sentences in time order, joined by a space, as many as fit in
// `max_bytes` taking them in order of importance (the first always). When
// the first alone is longer, it is cut at a word and ends with "…".
std::string join_sentences(const Corpus& corpus, const std::vector<int>& by_importance, std::size_t max_bytes);

// The span's summary: its `count` most central sentences within `max_bytes`.
std::string summarize(const Corpus& corpus, const Span& span, const SpanTerms& terms, const Steering& steering,
                      int count, std::size_t max_bytes);

inline constexpr std::size_t kSummaryBytes = 300;
inline constexpr std::size_t kActSummaryBytes = 600;

}  // namespace scribe::enrichment
