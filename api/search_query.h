#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/json.h"

// The substring search behind GET /api/v1/search and
// GET /api/v1/transcriptions/{id}/search, over the `search_segments` read
// model (projections/search_projection.cpp, migrations/008_search.sql). Kept
// apart from the handlers so that bench/search_benchmark.cpp times exactly the
// SQL the server runs.
namespace scribe::api {

struct SearchQuery {
  int64_t account_id = 0;
  std::string q;  // already validated and trimmed
  // Library search: only these transcriptions (ids of other accounts match
  // nothing). Absent means every transcription of the account.
  std::optional<std::vector<int64_t>> transcription_ids;
  // Per-transcription search: only this one (the caller checks it is theirs).
  std::optional<int64_t> transcription_id;
  int limit = 20;
  int offset = 0;
};

struct SearchHit {
  int64_t transcription_id = 0;
  std::optional<std::string> title;
  int64_t segment_id = 0;
  std::optional<std::string> speaker;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string text;
  std::string source;
  std::optional<std::string> source_url;
};

struct SearchPage {
  std::vector<SearchHit> hits;
  // Matching segments, counted exactly up to limits::kSearchTotalCap (and
  // equal to it when more match).
  int64_t total = 0;
  bool has_more = false;  // exact: hits exist after this page
};

// `q` as an ILIKE pattern matching it anywhere, with %, _ and \ taken literally.
std::string like_pattern(const std::string& q);

// A hit from a row whose first columns are, in order: transcription_id,
// title, segment_id, speaker, start_ms, end_ms, text, source, url (the
// transcription's). The opt-in heard search (api/heard_search.h) reads its
// hits with it too.
SearchHit hit_from_row(const pqxx::row& r);

// Runs the count and the page in `txn`; hits in the spec's order (newest
// transcription first, then start_ms, then segment id).
SearchPage run_search(pqxx::transaction_base& txn, const SearchQuery& query);

// EXPLAIN (ANALYZE with `analyze`) of the two statements run_search runs,
// planned as run_search plans them: for tests that check the indexes are
// used, and for the benchmark.
struct SearchPlans {
  std::string count;
  std::string page;
};
SearchPlans explain_search(pqxx::transaction_base& txn, const SearchQuery& query, bool analyze);

// The Search hit resource; `url` is the deep link to the moment (api/deep_link.h).
Json hit_json(const SearchHit& hit, const std::string& public_url);

}  // namespace scribe::api
