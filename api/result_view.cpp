#include "api/result_view.h"

#include "api/enrichment_rows.h"
#include "api/transcription_view.h"
#include "common/db.h"
#include "common/error.h"
#include "common/text.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

const db::Statement kSegmentsPage{"result.segments_page",
                                  "select id, segment_index, start_ms, end_ms, speaker, text from segments "
                                  "where transcription_id = $1 order by segment_index offset $2 limit $3"};
const db::Statement kSegmentsTotal{"result.segments_total",
                                   "select count(*) from segments where transcription_id = $1"};

Json segment_json(const pqxx::row& r) {
  const int64_t start_ms = r[2].as<int64_t>(), end_ms = r[3].as<int64_t>();
  return {{"id", r[0].as<int64_t>()},
          {"segment_index", r[1].as<int>()},
          {"start_seconds", start_ms / 1000.0},
          {"end_seconds", end_ms / 1000.0},
          {"start_ms", start_ms},
          {"end_ms", end_ms},
          {"speaker", r[4].is_null() ? Json(nullptr) : Json(r[4].as<std::string>())},
          {"text", r[5].as<std::string>()}};
}

}  // namespace

ResultOptions parse_result_options(const QueryParams& q, const std::set<std::string>& fallback) {
  static const std::set<std::string> known = {"chapters", "acts", "sections", "qna", "segments", "posting_chapters"};
  ResultOptions o;
  auto raw = q.string("include", 512);
  if (!raw) {
    o.include = fallback;
  } else {
    // Present but naming nothing (include=, include=,) is a mistake, not a
    // request for the metadata alone: omitting the parameter says that.
    for (const std::string& item : split_list(*raw, EmptyItems::kDrop)) {
      if (item == "all") {
        o.include = known;
      } else if (known.count(item)) {
        o.include.insert(item);
      } else {
        throw Error::invalid("include", "unknown include value '" + item +
                                            "'; use chapters, acts, sections, qna, segments, posting_chapters or all");
      }
    }
    if (o.include.empty())
      throw Error::invalid("include",
                           "include must name at least one of chapters, acts, sections, qna, segments, "
                           "posting_chapters or all; omit it for the default");
  }
  o.segments_offset = q.integer("segments_offset", 0, 0, INT32_MAX);
  o.segments_limit = q.integer("segments_limit", limits::kResultMaxSegments, 1, limits::kResultMaxSegments);
  o.qna_source = q.one_of("qna_source", {"all", "system"}, "all");
  return o;
}

std::optional<Json> result_body(pqxx::transaction_base& txn, int64_t account_id, int64_t id, const ResultOptions& o) {
  auto body = load_transcription(txn, account_id, id);
  if (!body) return std::nullopt;
  // /wait attaches content only to a completed transcription: before that
  // (processing, quoted) or instead of it (failed) there is none to attach,
  // and an empty array would claim "genuinely empty".
  if (o.content_only_when_completed && (*body).value("status", "") != "completed") {
    (*body)["included"] = Json::array();
    return body;
  }
  // Segments come from the speech pipeline's read model, the other arrays
  // from enrichment's (api/enrichment_rows.h). Before completion there is no
  // content and every array is empty.
  const bool completed = (*body).value("status", "") == "completed";
  const LinkSource link = LinkSource::of(*body, o.public_url);
  EnrichmentState enrichment;
  if (completed) enrichment = load_enrichment_state(txn, id);
  Json included = Json::array();
  for (const auto& name : o.include) {
    included.push_back(name);
    if (name == "segments") continue;
    // A completed transcription whose enrichment cannot be read answers 500
    // naming the array, never an empty array that would claim "none".
    const bool readable = enrichment.present && enrichment.state == "ok";
    if (completed && (name == "posting_chapters" ? !enrichment.posting.has_value() : !readable))
      throw Error("internal_error",
                  "the " + name + " of this transcription cannot be read (its enrichment " +
                      (enrichment.present ? enrichment.state : std::string("is missing")) +
                      "); POST .../timestamps/regenerate computes it again",
                  {{"field", name}});
    if (name == "posting_chapters") {
      (*body)[name] = completed ? posting_chapters_json(enrichment, link) : Json::object();
    } else if (!completed) {
      (*body)[name] = Json::array();
    } else if (name == "chapters" || name == "acts") {
      (*body)[name] = chapters_json(txn, link, name == "acts" ? "act" : "chapter", limits::kResultMaxChapters);
    } else if (name == "sections") {
      (*body)[name] = sections_json(txn, link, limits::kResultMaxSections);
    } else if (name == "qna") {
      (*body)[name] = qna_json(txn, link, o.qna_source, limits::kResultMaxQna);
    }
  }
  if (o.include.count("segments")) {
    Json segs = Json::array();
    int64_t total = 0;
    if (completed) {
      for (const auto& r : txn.exec_prepared(kSegmentsPage.name, id, o.segments_offset, o.segments_limit))
        segs.push_back(segment_json(r));
      total = txn.exec_prepared1(kSegmentsTotal.name, id)[0].as<int64_t>();
    }
    (*body)["segments"] = std::move(segs);
    (*body)["segments_meta"] = {
        {"offset", o.segments_offset},
        {"limit", o.segments_limit},
        {"total", total},
        {"has_more", o.segments_offset + static_cast<int64_t>((*body)["segments"].size()) < total}};
  }
  (*body)["included"] = included;
  return body;
}

}  // namespace scribe::api
