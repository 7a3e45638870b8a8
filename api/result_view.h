#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <string>

#include "api/params.h"
#include "common/json.h"

namespace scribe::api {

// The /result and /wait bodies: transcription metadata, `included`, and the
// requested arrays within the spec's per-call caps.
struct ResultOptions {
  std::set<std::string> include;  // chapters, acts, sections, qna, segments, posting_chapters
  int64_t segments_offset = 0;
  int64_t segments_limit = 1000;
  std::string qna_source = "all";
  // /wait: the arrays (all six are completed-only content) and `included`
  // stay out of the body unless the transcription is completed.
  bool content_only_when_completed = false;
  std::string public_url;  // deep links of uploads point at its player page
};

// `fallback` is the include set when the parameter is absent: chapters,
// sections and qna for /result, nothing (metadata only) for /wait.
ResultOptions parse_result_options(const QueryParams& q, const std::set<std::string>& fallback);
std::optional<Json> result_body(pqxx::transaction_base& txn, int64_t account_id, int64_t id, const ResultOptions& o);

}  // namespace scribe::api
