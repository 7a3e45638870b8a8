#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "enrichment/corpus.h"
#include "enrichment/keyphrase.h"

// Extractive summaries: the sentences of a span that are closest to what the
// span as a whole is about (centroid similarity over the span's weighted
// terms), chosen so that the second does not repeat the first (maximal
// marginal relevance), quoted verbatim.
namespace scribe::enrichment {

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
std::vector<int> pick_sentences(const Corpus& corpus, int first_sentence, const std::vector<double>& scores,
                                int count);

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
