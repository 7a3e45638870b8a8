#pragma once
#include <vector>

#include "domain/transcript_artifact.h"
#include "enrichment/corpus.h"

// Topic segmentation: where a transcript moves from one subject to the next.
// Both methods are TextTiling (Hearst 1997): compare the words just before
// each candidate gap with the words just after it, and cut where the
// similarity dips deepest relative to its surroundings. Both run in time
// linear in the number of words, so a 12-hour transcript takes well under a
// second.
namespace scribe::enrichment {

enum class SegmentationMethod {
  // TextTiling adapted to speech: stemmed, stop-worded content words weighted
  // by inverse document frequency (so that words every topic uses count for
  // little), windows of a fixed number of content words on either side of
  // every segment boundary (so that sentence length does not matter), depth
  // scores relative to the peaks around each valley (so that transcripts
  // whose sentences are more or less alike overall are judged alike), the
  // deepest boundaries taken first under a minimum section length and a
  // maximum section count, each then placed on the lowest nearby gap.
  kDefault,
  // Hearst 1997 as published: token-sequences of w = 20 words, blocks of
  // k = 6 sequences compared by the cosine of their raw term counts (stop
  // words removed, words stemmed), one round of 3-gap average smoothing,
  // depth scores, boundaries where the depth exceeds mean - sd / 2 (at least
  // 3 sequences apart), each moved to the nearest segment boundary.
  kPlainTextTiling,
};

struct SegmentationOptions {
  // --- kDefault ---
  // The defaults were chosen on the tune set of bench/enrichment_eval (and on
  // recognizer-like text made from its passages): topics of about 50 s, where
  // they find 0.9-1.0 of the boundaries within 20 s, and none in one topic.
  //
  // Content words (after stop words and fillers are dropped) in each of the
  // two windows compared at a gap: about 45 s of speech at 150 words/min.
  int window_tokens = 50;
  // The similarity curve is averaged over this many gaps on either side
  // before its valleys are found (0: not smoothed, best with relative depth).
  int smoothing_radius = 0;
  // Valleys shallower than mean(depth) - cutoff_sd * sd(depth), over all
  // valleys, are not boundaries. Larger values keep more boundaries.
  double depth_cutoff_sd = 1.0;
  // Valleys shallower than this are never boundaries, whatever the others.
  double min_depth = 0.4;
  // Depth relative to the peaks around the valley, (left + right - 2 * valley)
  // / (left + right), 0..1, rather than in cosine units: a dip from 0.5 to 0.4
  // is a pause in one topic, a dip from 0.2 to 0.02 a change of topic, and
  // transcripts differ in how alike their sentences are overall.
  bool relative_depth = true;
  // No section shorter than this (set 0 for text without real times), nor
  // with fewer segments than min_section_segments.
  double min_section_seconds = 30.0;
  int min_section_segments = 3;
  // The weakest boundaries beyond this many sections are dropped: 200
  // sections of a 12-hour recording are 3.6 minutes each.
  int max_sections = 200;
  // Each boundary found on the smoothed curve may move by up to this many
  // segments to the gap where the unsmoothed similarity is lowest.
  int refine_radius = 3;

  // --- kPlainTextTiling ---
  int tt_sequence_tokens = 20;  // w
  int tt_block_sequences = 6;   // k
  double tt_cutoff_sd = 0.5;    // boundary when depth > mean - tt_cutoff_sd * sd
  int tt_min_gap_sequences = 3;
};

// A boundary found: the segment that starts the new topic, and how deep the
// similarity dip was (larger is a clearer change of topic).
struct TopicBoundary {
  int segment = 0;
  double depth = 0;
};

// Ascending by segment, each in 1..segment_count - 1.
std::vector<TopicBoundary> find_boundaries(const Corpus& corpus, SegmentationMethod method,
                                           const SegmentationOptions& options = {});

// Returns the indices i (1..n-1) of segments that start a new topic,
// ascending. Empty for transcripts with fewer than two segments.
std::vector<int> topic_boundaries(const transcript::TranscriptArtifact& t, SegmentationMethod method,
                                  const SegmentationOptions& options = {});

}  // namespace scribe::enrichment
