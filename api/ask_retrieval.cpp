#include "api/ask_retrieval.h"

#include <algorithm>

#include "common/db.h"

namespace scribe::api {
namespace {

const db::Statement kQuestionLexemes{"ask.question_lexemes",
                                     "select unnest(tsvector_to_array(to_tsvector('english'::regconfig, $1)))"};
const db::Statement kTranscriptStats{"ask.transcript_stats",
                                     "select segments, lexemes from search_stats "
                                     "where transcription_id = $1 and account_id = $2"};
const db::Statement kLibraryStats{"ask.library_stats",
                                  "select coalesce(sum(segments), 0), coalesce(sum(lexemes), 0) from search_stats "
                                  "where account_id = $1 and ($2::bigint[] is null or transcription_id = any($2))"};
// One transcription (or a few, with transcription_ids) is read through the
// transcription index and filtered row by row: the account's GIN index would
// walk every segment of the account holding a term (bench/ask_speed.md:
// 110,607 index entries read to keep 967 of a 12-hour transcript in an
// account of a million segments). `offset 0` keeps the planner from
// combining the two indexes.
const db::Statement kTranscriptSegments{
    "ask.transcript_segments",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from (select * from search_segments "
    "where transcription_id = $1 and account_id = $2 offset 0) s where terms @@ $3::tsquery"};
const db::Statement kLibraryCount{
    "ask.library_count", "select count(*) from search_segments where account_id = $1 and terms @@ $2::tsquery"};
const db::Statement kLibrarySegments{
    "ask.library_segments",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from search_segments "
    "where account_id = $1 and terms @@ $2::tsquery limit $3"};
const db::Statement kChosenCount{"ask.chosen_count",
                                 "select count(*) from (select terms from search_segments "
                                 "where transcription_id = any($3::bigint[]) and account_id = $1 offset 0) s "
                                 "where terms @@ $2::tsquery"};
const db::Statement kChosenSegments{
    "ask.chosen_segments",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from (select * from search_segments "
    "where transcription_id = any($3::bigint[]) and account_id = $1 offset 0) s where terms @@ $2::tsquery limit $4"};
const db::Statement kNextSegment{
    "ask.next_segment",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from search_segments "
    "where transcription_id = $1 and (start_ms, segment_id) > ($2, $3) order by start_ms, segment_id limit 1"};
const db::Statement kSectionAt{"ask.section_at",
                               "select id, title from sections where transcription_id = $1 and start_ms <= $2 "
                               "order by start_ms desc limit 1"};
const db::Statement kFirstSection{"ask.first_section",
                                  "select id, title from sections where transcription_id = $1 "
                                  "order by start_ms limit 1"};

std::vector<enrichment::AskSegment> read_segments(const pqxx::result& rows) {
  std::vector<enrichment::AskSegment> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    enrichment::AskSegment s;
    s.segment_id = r[0].as<int64_t>();
    s.transcription_id = r[1].as<int64_t>();
    s.start_ms = r[2].as<int64_t>();
    s.end_ms = r[3].as<int64_t>();
    s.text = r[4].c_str();
    s.terms = enrichment::parse_tsvector(r[5].c_str(), &s.length);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string any_of(const std::vector<std::string>& lexemes) {
  std::string q;
  for (const auto& l : lexemes) {
    if (!q.empty()) q += " | ";
    q += '\'';
    for (char c : l) {
      if (c == '\'' || c == '\\') q += c == '\'' ? '\'' : '\\';
      q += c;
    }
    q += '\'';
  }
  return q;
}

Retrieved retrieve(pqxx::transaction_base& txn, const AskScope& scope, const std::string& question) {
  Retrieved out;
  std::vector<std::string> lexemes;
  for (const auto& r : txn.exec_prepared(kQuestionLexemes.name, question)) lexemes.push_back(r[0].c_str());
  out.terms = enrichment::query_terms(lexemes);
  if (out.terms.empty()) return out;

  if (scope.transcription_id) {
    auto stats = txn.exec_prepared(kTranscriptStats.name, *scope.transcription_id, scope.account_id);
    if (stats.empty()) return out;
    out.collection.segments = stats[0][0].as<double>();
    out.collection.average_length =
        out.collection.segments > 0 ? stats[0][1].as<double>() / out.collection.segments : 0;
    // One recording is at most a few ten thousand segments: fetch every one
    // holding a term, and count frequencies in them.
    out.segments = read_segments(
        txn.exec_prepared(kTranscriptSegments.name, *scope.transcription_id, scope.account_id, any_of(out.terms)));
    return out;
  }

  const std::optional<std::string> ids =
      scope.transcription_ids ? std::optional<std::string>(db::int_array_literal(*scope.transcription_ids))
                              : std::nullopt;
  auto stats = txn.exec_prepared(kLibraryStats.name, scope.account_id, ids);
  out.collection.segments = stats[0][0].as<double>();
  if (out.collection.segments <= 0) return out;
  out.collection.average_length = stats[0][1].as<double>() / out.collection.segments;
  // Each term's frequency in the scope (a count on the index), then fetch by
  // the rarest terms while their segments stay within the fetch bound.
  std::vector<std::pair<double, std::string>> by_df;
  for (const auto& t : out.terms) {
    const double df = (ids ? txn.exec_prepared1(kChosenCount.name, scope.account_id, any_of({t}), *ids)
                           : txn.exec_prepared1(kLibraryCount.name, scope.account_id, any_of({t})))[0]
                          .as<double>();
    out.collection.document_frequency[t] = df;
    if (df > 0) by_df.push_back({df, t});
  }
  if (by_df.empty()) return out;
  std::sort(by_df.begin(), by_df.end());
  std::vector<std::string> fetch;
  double fetched = 0;
  for (const auto& [df, t] : by_df) {
    if (!fetch.empty() && fetched + df > kLibraryFetchMaxSegments) break;
    fetch.push_back(t);
    fetched += df;
  }
  out.segments = read_segments(
      ids ? txn.exec_prepared(kChosenSegments.name, scope.account_id, any_of(fetch), *ids, kLibraryFetchMaxSegments)
          : txn.exec_prepared(kLibrarySegments.name, scope.account_id, any_of(fetch), kLibraryFetchMaxSegments));
  return out;
}

std::optional<enrichment::AskSegment> next_segment(pqxx::transaction_base& txn, const enrichment::AskSegment& s) {
  auto found = read_segments(txn.exec_prepared(kNextSegment.name, s.transcription_id, s.start_ms, s.segment_id));
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::optional<CitedSection> section_at(pqxx::transaction_base& txn, int64_t transcription_id, int64_t start_ms) {
  auto r = txn.exec_prepared(kSectionAt.name, transcription_id, start_ms);
  // A moment before the first section's start (rounding) belongs to it.
  if (r.empty()) r = txn.exec_prepared(kFirstSection.name, transcription_id);
  if (r.empty()) return std::nullopt;
  return CitedSection{r[0][0].as<int64_t>(), r[0][1].c_str()};
}

}  // namespace scribe::api
