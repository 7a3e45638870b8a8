#include "api/result_view.h"

#include "api/transcription_view.h"
#include "common/error.h"
#include "domain/limits.h"

namespace scribe::api {

ResultOptions parse_result_options(const QueryParams& q, const std::set<std::string>& fallback) {
  static const std::set<std::string> known = {"chapters", "acts", "sections", "qna", "segments", "posting_chapters"};
  ResultOptions o;
  auto raw = q.string("include", 512);
  if (!raw) {
    o.include = fallback;
  } else {
    std::string item;
    std::size_t start = 0;
    while (start <= raw->size()) {
      auto comma = raw->find(',', start);
      if (comma == std::string::npos) comma = raw->size();
      item = raw->substr(start, comma - start);
      start = comma + 1;
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      while (!item.empty() && item.back() == ' ') item.pop_back();
      if (item.empty()) continue;
      if (item == "all") {
        o.include = known;
      } else if (known.count(item)) {
        o.include.insert(item);
      } else {
        throw Error::invalid("include", "unknown include value '" + item +
                                            "'; use chapters, acts, sections, qna, segments, posting_chapters or all");
      }
    }
  }
  o.segments_offset = q.integer("segments_offset", 0, 0, INT32_MAX);
  o.segments_limit = q.integer("segments_limit", limits::kResultMaxSegments, 1, limits::kResultMaxSegments);
  o.qna_source = q.one_of("qna_source", {"all", "system"}, "all");
  return o;
}

std::optional<Json> result_body(pqxx::transaction_base& txn, int64_t account_id, int64_t id,
                                const ResultOptions& o) {
  auto body = load_transcription(txn, account_id, id);
  if (!body) return std::nullopt;
  // Enrichment (chapters, acts, sections, Q&A, posting chapters) and segments
  // are produced by the speech pipeline; until a transcription has them, the
  // arrays are genuinely empty.
  Json included = Json::array();
  for (const auto& name : o.include) {
    included.push_back(name);
    if (name == "posting_chapters") {
      (*body)[name] = Json::object();
    } else {
      (*body)[name] = Json::array();
    }
  }
  if (o.include.count("segments"))
    (*body)["segments_meta"] = {
        {"offset", o.segments_offset}, {"limit", o.segments_limit}, {"total", 0}, {"has_more", false}};
  (*body)["included"] = included;
  return body;
}

}  // namespace scribe::api
