#include "api/search_query.h"

#include "api/deep_link.h"
#include "common/db.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

// How a page is found depends on how common the substring is, and the count
// (run first) says so:
//  - "sorted": every match is collected through the trigram index (or the
//    transcription index when ids are given) and the page is cut from them
//    in order. Cost grows with the number of matches, so it is used when
//    fewer than limits::kSearchTotalCap match, or within one transcription.
//  - "walk": the account's ordering index (or, with transcription_ids, each
//    given transcription's segments, newest transcription first) is read in
//    the spec's order and stops once the page is full. Cost grows with offset / frequency, so it
//    is used for substrings with kSearchTotalCap or more matches, within a
//    budget of kWalkBudget rows; a walk that runs out of budget (a
//    substring common enough to count, too rare for a deep page) falls back
//    to "sorted".
// Plans are always made for the actual pattern rather than a generic plan
// for any pattern, which could not tell rare from common substrings.
constexpr int kWalkBudget = 20'000;
// The rows a two-character query probes (kProbe): pairs in a quarter or more
// of them skip the bigram index.
constexpr int kProbeRows = 4 * limits::kSearchTotalCap;

// For the rest of the search's transaction: plans made for the actual
// pattern, and neither JIT nor parallel workers. The bigram function's
// declared cost (migrations/051_search_bigrams.sql) puts the estimates of
// two-character queries far above the thresholds of both, though the index
// answers them in about a millisecond; compiling or starting workers took
// 100-200 ms. A search reads at most a few thousand rows.
const db::Statement kCustomPlans{"search.custom_plans",
                                 "select set_config('plan_cache_mode', 'force_custom_plan', true), "
                                 "set_config('jit', 'off', true), "
                                 "set_config('max_parallel_workers_per_gather', '0', true)"};

// $1 account, $2 pattern, $3 transcription ids or null, $4 transcription id or null.
#define SCRIBE_SEARCH_SCOPE                                                         \
  "where account_id = $1 and ($3::bigint[] is null or transcription_id = any($3)) " \
  "and ($4::bigint is null or transcription_id = $4) "
// The match condition. P holds `q` when it is two characters long, else null.
// Such a `q` has no whole trigram; the bigram index of
// migrations/051_search_bigrams.sql answers it, and for a `q` whose lower()
// is two characters long its condition is exactly the ILIKE's, so it
// replaces the ILIKE (kept beside it, the ILIKE tempted the planner to AND in
// a full scan of the trigram index). Custom plans fold the other branch away.
#define SCRIBE_SEARCH_MATCH(P)                                                                            \
  "and ((" P "::text is not null and length(lower(" P ")) = 2 and scribe_bigrams(text) @> array[lower(" P \
  ")]) or ((" P "::text is null or length(lower(" P ")) <> 2) and text ilike $2)) "
#define SCRIBE_SEARCH_ORDER "transcription_created_at desc, transcription_id desc, start_ms, segment_id"
#define SCRIBE_HIT_COLUMNS \
  "p.transcription_id, t.title, p.segment_id, p.speaker, p.start_ms, p.end_ms, p.text, t.source, t.url"

// Counting stops at the cap ($5): counting every match of a substring found
// in most of a large library would cost a scan of all of them.
const db::Statement kCount{
    "search.count",
    "select count(*) from (select 1 from search_segments " SCRIBE_SEARCH_SCOPE SCRIBE_SEARCH_MATCH("$6") "limit $5) m"};
// Two-character queries first count their matches among the first $6 rows
// of the scope. A pair found that often is counted (capped) there and then,
// and needs no index; any other goes through the bigram index, whose cost
// grows with the pair's matches, which this bounds.
const db::Statement kProbe{"search.probe",
                           "select count(*) from (select 1 from (select text from search_segments " SCRIBE_SEARCH_SCOPE
                           "limit $6) s where text ilike $2 limit $5) m"};
// "sorted": $5 rows from $6. MATERIALIZED plans the match set on its own,
// without the LIMIT that would tempt the planner into a walk.
const db::Statement kSorted{
    "search.page_sorted",
    "with m as materialized (select segment_id, transcription_id, transcription_created_at, start_ms, end_ms, "
    "speaker, text from search_segments " SCRIBE_SEARCH_SCOPE SCRIBE_SEARCH_MATCH("$7") "), "
    "p as (select * from m order by " SCRIBE_SEARCH_ORDER " limit $5 offset $6) "
    "select " SCRIBE_HIT_COLUMNS " from p join transcriptions t on t.id = p.transcription_id "
    "order by p." SCRIBE_SEARCH_ORDER};
// "walk": the first $5 matches among the first $6 rows in order; the row at
// the budget's end is returned too (hit false unless it matches), so the
// caller can tell "no more matches" from "budget spent".
// The inner ORDER BYs repeat the index's order so that the rows stream from
// the index scan and stop at the LIMIT; the join runs on those rows only.
const db::Statement kWalk{"search.page_walk",
                          "select " SCRIBE_HIT_COLUMNS
                          ", p.hit, p.rn from (select * from (select segment_id, transcription_id, "
                          "transcription_created_at, start_ms, end_ms, speaker, text, text ilike $2 as hit, "
                          "row_number() over (order by " SCRIBE_SEARCH_ORDER
                          ") as rn from search_segments " SCRIBE_SEARCH_SCOPE "order by " SCRIBE_SEARCH_ORDER
                          " limit $6) w where w.hit or w.rn = $6 order by " SCRIBE_SEARCH_ORDER
                          " limit $5) p join transcriptions t on t.id = p.transcription_id order by p.rn"};

// "walk" over transcription_ids: $1 account, $2 pattern, $3 ids, the first $4
// matches among the first $5 rows, as kWalk. The ids are put in the spec's
// order first (OFFSET 0 keeps that subquery, and so its order, whole); each
// one's segments then come from the transcription index in order, and the
// rows stream through the window to the LIMITs. Collecting and sorting every
// match of a common substring in 50 transcriptions took 50-75 ms; this reads
// a few dozen rows. search_segments.transcription_created_at is a copy of
// transcriptions.created_at, so the order is the one kSorted uses.
const db::Statement kWalkIds{
    "search.page_walk_ids",
    "select " SCRIBE_HIT_COLUMNS
    ", p.hit, p.rn from (select * from (select s.segment_id, "
    "t.id as transcription_id, t.created_at as transcription_created_at, s.start_ms, s.end_ms, s.speaker, s.text, "
    "s.text ilike $2 as hit, row_number() over (order by t.created_at desc, t.id desc, s.start_ms, s.segment_id) "
    "as rn from (select id, created_at from transcriptions where id = any($3::bigint[]) and account_id = $1 "
    "order by created_at desc, id desc offset 0) t cross join lateral (select segment_id, start_ms, end_ms, "
    "speaker, text from search_segments s where s.transcription_id = t.id and s.account_id = $1 "
    "order by s.start_ms, s.segment_id) s order by t.created_at desc, t.id desc, s.start_ms, s.segment_id "
    "limit $5) w where w.hit or w.rn = $5 order by " SCRIBE_SEARCH_ORDER
    " limit $4) p join transcriptions t on t.id = p.transcription_id order by p.rn"};

std::optional<std::string> text_or_null(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return std::string(f.c_str());
}

SearchHit hit_of(const pqxx::row& r) {
  SearchHit h;
  h.transcription_id = r[0].as<int64_t>();
  h.title = text_or_null(r[1]);
  h.segment_id = r[2].as<int64_t>();
  h.speaker = text_or_null(r[3]);
  h.start_ms = r[4].as<int64_t>();
  h.end_ms = r[5].as<int64_t>();
  h.text = r[6].as<std::string>();
  h.source = r[7].as<std::string>();
  h.source_url = text_or_null(r[8]);
  return h;
}

std::optional<std::string> array_literal(const std::optional<std::vector<int64_t>>& ids) {
  if (!ids) return std::nullopt;
  return db::int_array_literal(*ids);
}

// `q` when it is two characters (code points) long: the bigram parameter.
std::optional<std::string> bigram_of(const std::string& q) {
  int chars = 0;
  for (unsigned char c : q)
    if ((c & 0xC0) != 0x80) ++chars;
  if (chars != 2) return std::nullopt;
  return q;
}

// The bigram parameter of the count and sorted statements: `q` when it is
// two characters long, unless the probe finds it kSearchTotalCap times in the
// first kProbeRows rows (then `common` is set: the total is the cap).
std::optional<std::string> bigram_for(pqxx::transaction_base& txn, const SearchQuery& query, const std::string& pattern,
                                      const std::optional<std::string>& ids, bool& common) {
  auto bigram = bigram_of(query.q);
  common = bigram && txn.exec_prepared1(kProbe.name, query.account_id, pattern, ids, query.transcription_id,
                                        limits::kSearchTotalCap, kProbeRows)[0]
                             .as<int64_t>() >= limits::kSearchTotalCap;
  if (common) bigram.reset();
  return bigram;
}

bool use_walk(const SearchQuery& query, int64_t total) {
  return total >= limits::kSearchTotalCap && !query.transcription_id;
}

}  // namespace

SearchHit hit_from_row(const pqxx::row& r) { return hit_of(r); }

std::string like_pattern(const std::string& q) {
  std::string out = "%";
  for (char c : q) {
    if (c == '\\' || c == '%' || c == '_') out += '\\';
    out += c;
  }
  return out + "%";
}

SearchPage run_search(pqxx::transaction_base& txn, const SearchQuery& query) {
  txn.exec_prepared(kCustomPlans.name);
  const std::string pattern = like_pattern(query.q);
  const auto ids = array_literal(query.transcription_ids);
  bool probed_common = false;
  const auto bigram = bigram_for(txn, query, pattern, ids, probed_common);
  SearchPage page;
  page.total = probed_common ? limits::kSearchTotalCap
                             : txn.exec_prepared1(kCount.name, query.account_id, pattern, ids, query.transcription_id,
                                                  limits::kSearchTotalCap, bigram)[0]
                                   .as<int64_t>();
  if (page.total == 0 || (page.total < limits::kSearchTotalCap && query.offset >= page.total)) return page;
  // One hit more than the page says whether there are more, also beyond a
  // capped total.
  const int64_t wanted = static_cast<int64_t>(query.offset) + query.limit + 1;
  bool sorted = !use_walk(query, page.total);
  if (!sorted) {
    std::vector<SearchHit> hits;
    bool budget_spent = false;
    const auto rows = ids ? txn.exec_prepared(kWalkIds.name, query.account_id, pattern, ids, wanted + 1, kWalkBudget)
                          : txn.exec_prepared(kWalk.name, query.account_id, pattern, ids, query.transcription_id,
                                              wanted + 1, kWalkBudget);
    for (const auto& r : rows) {
      if (r[9].as<bool>()) hits.push_back(hit_of(r));
      if (r[10].as<int64_t>() == kWalkBudget && static_cast<int64_t>(hits.size()) < wanted) budget_spent = true;
    }
    if (budget_spent) {
      sorted = true;
    } else {
      for (std::size_t i = query.offset; i < hits.size() && page.hits.size() < static_cast<std::size_t>(query.limit);
           ++i)
        page.hits.push_back(std::move(hits[i]));
      page.has_more = static_cast<int64_t>(hits.size()) >= wanted;
    }
  }
  if (sorted) {
    for (const auto& r : txn.exec_prepared(kSorted.name, query.account_id, pattern, ids, query.transcription_id,
                                           query.limit + 1, query.offset, bigram))
      page.hits.push_back(hit_of(r));
    page.has_more = page.hits.size() > static_cast<std::size_t>(query.limit);
    if (page.has_more) page.hits.pop_back();
  }
  return page;
}

SearchPlans explain_search(pqxx::transaction_base& txn, const SearchQuery& query, bool analyze) {
  txn.exec_prepared(kCustomPlans.name);
  const int64_t total = run_search(txn, query).total;  // also prepares the statements on the server
  txn.conn().prepare_now(kSorted.name);
  txn.conn().prepare_now(kWalk.name);
  txn.conn().prepare_now(kWalkIds.name);
  txn.conn().prepare_now(kProbe.name);
  const auto ids = array_literal(query.transcription_ids);
  const std::string common = std::to_string(query.account_id) + ", " + txn.quote(like_pattern(query.q)) + ", " +
                             (ids ? txn.quote(*ids) : "null") + ", " +
                             (query.transcription_id ? std::to_string(*query.transcription_id) : "null");
  auto plan = [&](const char* statement, const std::string& args) {
    std::string text;
    for (const auto& r : txn.exec(std::string("explain ") + (analyze ? "(analyze) " : "") + "execute " +
                                  txn.quote_name(statement) + "(" + args + ")"))
      text += std::string(r[0].c_str()) + "\n";
    return text;
  };
  const int64_t wanted = static_cast<int64_t>(query.offset) + query.limit + 1;
  bool probed_common = false;
  const auto bigram = bigram_for(txn, query, like_pattern(query.q), ids, probed_common);
  const std::string bigram_arg = bigram ? txn.quote(*bigram) : "null";
  return {
      probed_common ? plan(kProbe.name,
                           common + ", " + std::to_string(limits::kSearchTotalCap) + ", " + std::to_string(kProbeRows))
                    : plan(kCount.name, common + ", " + std::to_string(limits::kSearchTotalCap) + ", " + bigram_arg),
      use_walk(query, total)
          ? (ids ? plan(kWalkIds.name, std::to_string(query.account_id) + ", " + txn.quote(like_pattern(query.q)) +
                                           ", " + txn.quote(*ids) + ", " + std::to_string(wanted + 1) + ", " +
                                           std::to_string(kWalkBudget))
                 : plan(kWalk.name, common + ", " + std::to_string(wanted + 1) + ", " + std::to_string(kWalkBudget)))
          : plan(kSorted.name, common + ", " + std::to_string(query.limit + 1) + ", " + std::to_string(query.offset) +
                                   ", " + bigram_arg)};
}

Json hit_json(const SearchHit& h, const std::string& public_url) {
  auto or_null = [](const std::optional<std::string>& s) { return s ? Json(*s) : Json(nullptr); };
  return {{"transcription_id", h.transcription_id},
          {"title", or_null(h.title)},
          {"segment_id", h.segment_id},
          {"speaker", or_null(h.speaker)},
          {"start_ms", h.start_ms},
          {"end_ms", h.end_ms},
          {"text", h.text},
          {"url", deep_link(public_url, h.transcription_id, h.source, h.source_url, h.start_ms)}};
}

}  // namespace scribe::api
