#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "enrichment/corpus.h"
#include "domain/enrichment_artifact.h"
#include "enrichment/labels.h"

// What is built on the sections: adjacent spans merged into chapters and
// acts, every span labelled with a title and a summary (structure.cpp), the
// system Q&A (qna.cpp) and the posting-chapters cache (posting.cpp).
namespace scribe::enrichment {

// Sections from topic boundaries: [0, b0), [b0, b1), ..., [bk, n).
std::vector<Span> spans_from_boundaries(int segment_count, const std::vector<int>& boundaries);

// Where a span starts and ends on the recording's clock. Sections keep their
// first segment's start and last segment's end; chapters and acts cover the
// recording: the first starts at 0, each ends where the next starts, the last
// at the end of the recording.
enum class Timing { kSegments, kCovering };
double span_start(const Corpus& corpus, const std::vector<Span>& spans, std::size_t i, Timing timing);
double span_end(const Corpus& corpus, const std::vector<Span>& spans, std::size_t i, Timing timing);

// Merges adjacent spans, the most alike pair first (cosine of their
// idf-weighted term counts, less a penalty for making one span much longer
// than the average), until at most `max_count` remain and none but the last
// covers less than `min_seconds` (while more than one remains). A heap keeps
// it O(k log k) merges for k spans.
std::vector<Span> merge_spans(const Corpus& corpus, const std::vector<Span>& spans, int max_count, double min_seconds);

// A span with what enrichment says about it.
struct LabeledSpan {
  Span span;
  double start = 0;
  double end = 0;
  SpanTerms terms;
  std::vector<Keyphrase> phrases;
  std::string title;
  std::string summary;
};

struct LabelStyle {
  int summary_sentences = 2;
  std::size_t summary_bytes = 300;
  TitleShape titles = TitleShape::kPhrase;
};

// Titles (unique within the list) and summaries of the style's number of
// sentences within its length.
std::vector<LabeledSpan> label_spans(const Corpus& corpus, const std::vector<Span>& spans, Timing timing,
                                     const Steering& steering, const LabelStyle& style);

// --- System Q&A (qna.cpp): the questions a listener would ask about each
// section, built from its keyphrases, answered with the transcript's own
// sentences. ---

// Up to `max_entries` entries, ordered by section then by importance: one
// per section first (the most salient sections when there are more sections
// than entries), then more for the most salient sections while room remains
// (3 to 6 a section, the later ones only about phrases said more than once).
// Phrases that behave like verbs or adjectives, or weigh under 0.3 of the
// section's best, are not asked about. The question takes the shape of what a
// sentence says about the keyphrase, and that sentence leads the answer:
//   "how black holes form"           -> "How do black holes form?"
//   "A glacier is a river of ice"    -> "What is a glacier?"
//   "Smith said", "Dr. Smith"        -> "Who is Smith?"
//   anything else                    -> "What is said about the sauce?" (and two variants)
// Answers are one or two whole sentences quoted verbatim; no two questions
// are the same. Empty when there are no sections.
std::vector<QnaEntry> system_qna(const Corpus& corpus, const std::vector<LabeledSpan>& sections, int max_entries);

// --- Posting chapters (posting.cpp): the four variants of the one style,
// built from labelled sections and chapters. A refine prompt's steering has
// already raised the weight of its terms in every span, so it also decides
// which spans count as salient here and which sentences are quoted. ---

// standard: every chapter (start, title).
// highlights: the 5 most salient chapters (or sections, when there are
//   fewer than 5 chapters but more sections), in time order.
// clips: 3 moments of 15-60 s (about 20 s) within one section each (two
//   from one section only when there are fewer than 3), the ones whose
//   sentences are most central to their section, in time order, headlined
//   from their most central sentence. A recording shorter than 15 s gives one
//   clip of all of it; one without speech none.
// quoted_sections: 8-12 quotes, each one whole sentence of one segment
//   (verbatim), from the most salient sections (one each when there are 8
//   or more sections, several each otherwise, never two from one segment),
//   each headlined from its own words (sentence_headline); fewer when the
//   transcript has fewer sentences.
PostingChapters build_posting(const Corpus& corpus, const std::vector<LabeledSpan>& sections,
                              const std::vector<LabeledSpan>& chapters, const Steering& steering);

}  // namespace scribe::enrichment
