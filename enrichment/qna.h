#pragma once
#include <vector>

#include "domain/enrichment_artifact.h"
#include "enrichment/corpus.h"
#include "enrichment/structure.h"

// System Q&A: the questions a listener would ask about each section, built
// from its keyphrases, answered with the transcript's own sentences.
namespace scribe::enrichment {

// Up to `max_entries` entries, ordered by section then by importance: one
// per section first (the most salient sections when there are more sections
// than entries), then second and third questions for the most salient
// sections while room remains. The question's form follows what the best
// answer sentence says about the keyphrase:
//   "how black holes form"           -> "How do black holes form?"
//   "inflation is a rise in prices"  -> "What is inflation?"
//   "Smith said", "Dr. Smith"        -> "Who is Smith?"
//   anything else                    -> "What is said about <phrase>?" (and two variants)
// Answers are one or two whole sentences quoted verbatim; no two questions
// are the same. Empty when there are no sections.
std::vector<QnaEntry> system_qna(const Corpus& corpus, const std::vector<LabeledSpan>& sections, int max_entries);

}  // namespace scribe::enrichment
