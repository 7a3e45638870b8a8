#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "enrichment/corpus.h"
#include "enrichment/keyphrase.h"

// The larger structure built on the sections: adjacent spans merged into
// chapters and acts, and every span labelled with a title and a summary.
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
std::vector<Span> merge_spans(const Corpus& corpus, const std::vector<Span>& spans, int max_count,
                              double min_seconds);

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

}  // namespace scribe::enrichment
