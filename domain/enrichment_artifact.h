#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

// What enrichment makes of one transcript: sections, chapters, acts, system
// Q&A and the posting-chapters cache. The worker computes it after
// recognition (enrichment/), stores it whole as one object beside the
// transcript artifact (`transcripts/<id>/enrichment-attempt-<n>-<digest>.json`),
// and the TranscriptionCompleted event references it with its SHA-256; a
// regeneration stores a new posting-chapters object referenced by
// PostingChaptersRegenerated. The enrichment projection loads both into read
// tables. Times are seconds from the start of the recording; links are not
// stored (the API renders them from the source at read time).
namespace scribe::enrichment {

// A contiguous run of segments on one topic. Boundaries fall on segment
// boundaries: [first_segment_index, first_segment_index + segment_count).
struct Section {
  int first_segment_index = 0;
  int segment_count = 0;
  double start = 0;
  double end = 0;
  std::string title;
  std::string summary;
  int64_t first_segment_id = 0;  // that segment's id in the transcript artifact: the section's id
};

// Chapters (the curated 8-30 list, fewer for a short recording, never padded)
// and acts (3-15 narrative summaries) share this shape.
struct Chapter {
  double start = 0;
  double end = 0;
  std::string title;
  std::string summary;
};

struct Citation {
  std::string title;  // the cited section's title
  double start = 0;   // the cited moment
};

// A question a listener would ask, with an extractive answer (verbatim
// transcript sentences). `citations` are the sections the question is about;
// `answer_citations` the moments each answer sentence comes from.
struct QnaEntry {
  std::string question;
  std::string answer;
  std::vector<Citation> citations;
  std::vector<Citation> answer_citations;
};

// One item of a posting-chapters variant. Chapter variants (standard,
// highlights, clips) use start and title; quoted_sections also `quote`
// (verbatim transcript text) and its title is the item's insight_title.
struct PostingItem {
  double start = 0;
  std::string title;
  std::optional<std::string> quote;
};

// The curated cache: the four variants of the one style (`balanced`).
struct PostingChapters {
  std::vector<PostingItem> standard;         // 8-30, fewer for a short recording
  std::vector<PostingItem> highlights;       // 5 (fewer when there are fewer topics)
  std::vector<PostingItem> clips;            // 3 clip ideas
  std::vector<PostingItem> quoted_sections;  // 8-12 with insight_title and quote
  std::optional<std::string> refine_prompt;  // what steered a regeneration
};

struct EnrichmentArtifact {
  std::string method;  // e.g. "extractive-v1", or the chat model's name
  std::vector<Section> sections;
  std::vector<Chapter> chapters;
  std::vector<Chapter> acts;
  std::vector<QnaEntry> qna;
  PostingChapters posting;
};

Json to_json(const PostingChapters& p);
PostingChapters posting_from_json(const Json& j);
Json to_json(const EnrichmentArtifact& a);
EnrichmentArtifact artifact_from_json(const Json& j);

// Object keys, under transcript::transcription_prefix(id) so deletion removes them.
std::string artifact_key(int64_t transcription_id, int attempt, const std::string& sha256_hex);
std::string posting_key(int64_t transcription_id, const std::string& sha256_hex);

}  // namespace scribe::enrichment
