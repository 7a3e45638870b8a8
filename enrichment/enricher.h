#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"
#include "enrichment/corpus.h"
#include "enrichment/segmentation.h"

// Extractive enrichment of a finished transcript, with no model and no
// network. The steps, each linear (or n log n) in the transcript's length:
//   corpus.h        every word tokenized, classified and stemmed once;
//   segmentation.h  topic sections (TextTiling over idf-weighted windows);
//   labels.h        per section: terms weighted against the whole transcript,
//                   keyphrases, a title from them, a summary quoted from the
//                   most central sentences;
//   structure.h     chapters (sections merged, most alike neighbours first,
//                   to at most 30 of at least 30 s), acts (chapters merged to
//                   3-15), system Q&A and the posting-chapters cache.
// Deterministic: the same transcript and options always give the same
// artifact. A 1-hour transcript takes well under a second, 12 hours a few.
namespace scribe::enrichment {

inline constexpr const char* kExtractiveMethod = "extractive-v1";

struct EnrichOptions {
  SegmentationMethod segmentation_method = SegmentationMethod::kDefault;
  SegmentationOptions segmentation;
  // Chapters: sections merged (most alike neighbours first) down to this
  // many, and none shorter than min_chapter_seconds while others remain. A
  // recording with fewer topics than the 8 the spec's list aims at gets
  // fewer chapters: they are never padded.
  int max_chapters = 30;
  double min_chapter_seconds = 30.0;
  // Acts: chapters merged to about one act per `chapters_per_act` chapters,
  // within [min_acts, max_acts] (fewer only when there are fewer sections).
  double chapters_per_act = 3.0;
  int min_acts = 3;
  int max_acts = 15;
  // System Q&A entries (the API shows 20).
  int max_qna = 20;
  // Summaries: sentences and length (bytes; the text is cut at a sentence,
  // or at a word with "…" when one sentence is longer).
  int summary_sentences = 2;
  std::size_t summary_bytes = 300;
  int act_summary_sentences = 3;
  std::size_t act_summary_bytes = 600;
  // How titles and questions weigh their words (parts of speech, the
  // recognizer's confidence, noun phrases over pairs).
  LabelOptions labeling;
};

// The whole artifact, with method "extractive-v1". An empty transcript gives
// empty lists; a tiny one short lists. Never throws for any transcript.
EnrichmentArtifact enrich(const transcript::TranscriptArtifact& t, const EnrichOptions& o = {});

// Only the posting-chapters cache, for POST /timestamps/regenerate, from the
// sections stored with the artifact (when they do not fit the transcript,
// they are computed again). Same rules as enrich() with default options, so
// with no prompt it gives enrich(t).posting. `refine_prompt` (at most 200
// characters, already checked) steers the choice toward its content words:
// sections and sentences that contain them are preferred, and titles use them
// where they occur. Deterministic for the same inputs.
PostingChapters posting_chapters(const transcript::TranscriptArtifact& t, const std::vector<Section>& sections,
                                 const std::optional<std::string>& refine_prompt);

}  // namespace scribe::enrichment
