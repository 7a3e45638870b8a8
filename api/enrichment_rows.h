#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/json.h"
#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"

// The enrichment read models (projections/enrichment_projection.cpp) as the
// API reads them: /result's arrays (with deep links) and what /timestamps
// renders. `Source` is where links point (api/deep_link.h).
namespace scribe::api {

struct LinkSource {
  std::string public_url;
  int64_t transcription_id = 0;
  std::string source;              // video_site | platform_url | external_url | upload
  std::optional<std::string> url;  // the link sources' URL
  std::string at(int64_t start_ms) const;
  std::string at_seconds(double start) const;  // rounded to the millisecond, as the rows store times
  // Where the links of the transcription `transcription` (its JSON, as
  // api/transcription_view.h renders it) point.
  static LinkSource of(const Json& transcription, const std::string& public_url);
};

struct EnrichmentState {
  bool present = false;         // a row exists
  std::string state;            // ok | missing | failed
  std::optional<Json> posting;  // the cache (enrichment::to_json(PostingChapters)), when generated
  std::string generated_at;     // of the enrichment
  std::string posting_generated_at;
  std::string posting_method;
  int regen_count = 0;
};

EnrichmentState load_enrichment_state(pqxx::transaction_base& txn, int64_t transcription_id);

// /result's arrays, at most `limit` items each.
Json chapters_json(pqxx::transaction_base& txn, const LinkSource& link, const char* kind, int limit);
Json sections_json(pqxx::transaction_base& txn, const LinkSource& link, int limit);
Json qna_json(pqxx::transaction_base& txn, const LinkSource& link, const std::string& qna_source, int limit);
// The spec's posting_chapters object: variant -> style -> {items, generated_at, style}.
Json posting_chapters_json(const EnrichmentState& e, const LinkSource& link);

// Rows for /timestamps: chapters (or acts) and sections as posting items.
struct TimedRow {
  double start_seconds = 0;
  std::string title;
  std::string summary;
};
std::vector<TimedRow> load_chapter_rows(pqxx::transaction_base& txn, int64_t transcription_id, const char* kind);
std::vector<TimedRow> load_section_rows(pqxx::transaction_base& txn, int64_t transcription_id);

// The transcript as the segments table holds it (no words) and its sections
// as the sections table holds them: what a regeneration recomputes from.
transcript::TranscriptArtifact load_transcript(pqxx::transaction_base& txn, int64_t transcription_id);
std::vector<enrichment::Section> load_sections(pqxx::transaction_base& txn, int64_t transcription_id,
                                               const transcript::TranscriptArtifact& t);

}  // namespace scribe::api
