#include "api/ask_retrieval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "common/db.h"
#include "enrichment/text.h"

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
// Every segment of one transcription, or of the chosen ones, when the scope
// is small enough to be matched in process (kReadWholeMaxSegments): the
// terms are looked up in a hash set, not in SQL (ask_speed.md, issue 34). A
// tsquery of the question's terms and their sound- and meaning-alikes ORs up
// to a few hundred lexemes, each looked up in each segment (the 12-hour
// transcript's 9,100 segments: p95 321 ms), and counting each lexeme of 50
// chosen transcriptions walks the account's GIN index once per lexeme (p95
// 906 ms). Read through the transcription index. (A hashed `= any($lexemes)`
// in SQL was slower as a prepared statement: its parameter array is not
// hashed.)
const db::Statement kTranscriptSegments{
    "ask.transcript_segments",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from search_segments "
    "where transcription_id = $1 and account_id = $2"};
const db::Statement kChosenAll{
    "ask.chosen_all",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from search_segments "
    "where transcription_id = any($2::bigint[]) and account_id = $1"};
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
// Every lexeme's frequency at once ($2 lexemes, $3 transcription ids or
// null): one index probe each, one round trip for all (a question brings
// tens of variants).
const db::Statement kLexemeCounts{
    "ask.lexeme_counts",
    "select l, (select count(*) from search_segments s where s.account_id = $1 and "
    "($3::bigint[] is null or s.transcription_id = any($3)) and s.terms @@ quote_literal(l)::tsquery) "
    "from unnest($2::text[]) as x(l)"};
// The planner's own sample of the commonest lexemes (ANALYZE keeps up to ten
// times the statistics target of them, with the share of rows holding each),
// for those of $1 it holds; none before the table's first ANALYZE.
const db::Statement kCommonLexemes{
    "ask.common_lexemes",
    "select e, f from pg_stats s cross join lateral unnest(s.most_common_elems::text::text[], "
    "s.most_common_elem_freqs) as x(e, f) where s.schemaname = current_schema() and s.tablename = 'search_segments' "
    "and s.attname = 'terms' and e = any($1::text[])"};
const db::Statement kNextSegment{
    "ask.next_segment",
    "select segment_id, transcription_id, start_ms, end_ms, text, terms::text from search_segments "
    "where transcription_id = $1 and (start_ms, segment_id) > ($2, $3) order by start_ms, segment_id limit 1"};
const db::Statement kWordLexemes{"ask.word_lexemes",
                                 "select coalesce((tsvector_to_array(to_tsvector('english'::regconfig, w)))[1], '') "
                                 "from unnest($1::text[]) with ordinality as x(w, i) order by i"};
// $1 account, $2 lexemes, $3 one transcription or null, $4 transcription ids
// or null. Through (account_id, lexeme) for the library, (transcription_id,
// start_ms) for one transcription.
const db::Statement kAlternates{
    "ask.alternates",
    "select transcription_id, start_ms, end_ms, word, lexeme, posterior from transcript_alternates "
    "where account_id = $1 and lexeme = any($2::text[]) and ($3::bigint is null or transcription_id = $3) "
    "and ($4::bigint[] is null or transcription_id = any($4)) order by posterior desc limit $5"};
// The segment holding each moment ($2/$3: transcription ids and times).
const db::Statement kSegmentsAt{
    "ask.segments_at",
    "select distinct on (s.segment_id) s.segment_id, s.transcription_id, s.start_ms, s.end_ms, s.text, "
    "s.terms::text from unnest($2::bigint[], $3::bigint[]) as a(tid, t) cross join lateral "
    "(select * from search_segments where transcription_id = a.tid and account_id = $1 and start_ms <= a.t "
    "order by start_ms desc, segment_id desc limit 1) s where s.end_ms >= a.t"};
const db::Statement kSectionAt{"ask.section_at",
                               "select id, title from sections where transcription_id = $1 and start_ms <= $2 "
                               "order by start_ms desc limit 1"};
const db::Statement kFirstSection{"ask.first_section",
                                  "select id, title from sections where transcription_id = $1 "
                                  "order by start_ms limit 1"};

// With `holding`, only the rows with one of its lexemes among their terms
// (a scope read whole): the terms are parsed first, and the rest of a row is
// read only when it is kept.
std::vector<enrichment::AskSegment> read_segments(const pqxx::result& rows,
                                                  const std::unordered_set<std::string>* holding = nullptr) {
  std::vector<enrichment::AskSegment> out;
  if (!holding) out.reserve(rows.size());
  for (const auto& r : rows) {
    enrichment::AskSegment s;
    s.terms = enrichment::parse_tsvector(r[5].c_str(), &s.length);
    if (holding &&
        std::none_of(s.terms.begin(), s.terms.end(), [&](const auto& t) { return holding->count(t.first) > 0; }))
      continue;
    s.segment_id = r[0].as<int64_t>();
    s.transcription_id = r[1].as<int64_t>();
    s.start_ms = r[2].as<int64_t>();
    s.end_ms = r[3].as<int64_t>();
    s.text = r[4].c_str();
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

std::vector<std::string> lexemes_of(pqxx::transaction_base& txn, const std::vector<std::string>& words) {
  std::vector<std::string> out;
  if (words.empty()) return out;
  for (const auto& r : txn.exec_prepared(kWordLexemes.name, db::text_array_literal(words))) out.push_back(r[0].c_str());
  return out;
}

std::vector<HeardAlternate> heard_alternates(pqxx::transaction_base& txn, const AskScope& scope,
                                             const std::vector<std::string>& lexemes) {
  std::vector<HeardAlternate> out;
  if (lexemes.empty()) return out;
  const std::optional<std::string> ids =
      scope.transcription_ids ? std::optional<std::string>(db::int_array_literal(*scope.transcription_ids))
                              : std::nullopt;
  for (const auto& r : txn.exec_prepared(kAlternates.name, scope.account_id, db::text_array_literal(lexemes),
                                         scope.transcription_id, ids, kAlternatesMax))
    out.push_back(
        {r[0].as<int64_t>(), r[1].as<int64_t>(), r[2].as<int64_t>(), r[3].c_str(), r[4].c_str(), r[5].as<double>()});
  return out;
}

namespace {

// The question's terms, each with the surface words it stands for.
std::vector<enrichment::QueryTerm> question_terms(pqxx::transaction_base& txn, const std::string& question,
                                                  const enrichment::HeardMatching& matching) {
  std::vector<std::string> lexemes;
  for (const auto& r : txn.exec_prepared(kQuestionLexemes.name, question)) lexemes.push_back(r[0].c_str());
  std::vector<enrichment::QueryTerm> terms;
  for (auto& t : enrichment::query_terms(lexemes)) terms.push_back({std::move(t), {}});
  if (terms.empty() || (!matching.sound_alikes && !matching.meaning_alikes)) return terms;
  const auto words = enrichment::words(question);
  const auto stems = lexemes_of(txn, words);
  std::vector<std::vector<std::string>> surface(terms.size());
  for (std::size_t i = 0; i < words.size() && i < stems.size(); ++i)
    for (std::size_t t = 0; t < terms.size(); ++t)
      if (terms[t].lexeme == stems[i] && std::find(surface[t].begin(), surface[t].end(), words[i]) == surface[t].end())
        surface[t].push_back(words[i]);
  const auto variants = enrichment::variant_words(surface, matching);
  std::vector<std::string> variant_words;
  for (const auto& v : variants) variant_words.push_back(v.word);
  const auto variant_lexemes = lexemes_of(txn, variant_words);
  for (std::size_t i = 0; i < variants.size() && i < variant_lexemes.size(); ++i) {
    const std::string& lexeme = variant_lexemes[i];
    if (lexeme.empty() || !enrichment::query_terms({lexeme}).size()) continue;
    // A variant that is itself a term of the question adds nothing.
    if (std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return t.lexeme == lexeme; })) continue;
    auto& mine = terms[variants[i].term].variants;
    auto same = std::find_if(mine.begin(), mine.end(), [&](const auto& v) { return v.lexeme == lexeme; });
    if (same == mine.end()) mine.push_back({lexeme, variants[i].factor, variants[i].how});
    else if (variants[i].factor > same->factor) *same = {lexeme, variants[i].factor, variants[i].how};
  }
  return terms;
}

// Every lexeme the segments are fetched by: the terms', then their variants'.
std::vector<std::string> all_lexemes(const std::vector<enrichment::QueryTerm>& terms) {
  std::vector<std::string> out;
  for (const auto& t : terms) out.push_back(t.lexeme);
  for (const auto& t : terms)
    for (const auto& v : t.variants)
      if (std::find(out.begin(), out.end(), v.lexeme) == out.end()) out.push_back(v.lexeme);
  return out;
}

// Adds what the recognizer almost heard of the terms to the segments holding
// those moments, fetching segments that hold no term as written.
void add_heard(pqxx::transaction_base& txn, const AskScope& scope, Retrieved& out) {
  std::vector<std::string> lexemes;
  for (const auto& t : out.terms) lexemes.push_back(t.lexeme);
  const auto heard = heard_alternates(txn, scope, lexemes);
  if (heard.empty()) return;
  std::vector<int64_t> tids, times;
  for (const auto& h : heard) {
    tids.push_back(h.transcription_id);
    times.push_back((h.start_ms + h.end_ms) / 2);
  }
  std::map<int64_t, std::size_t> by_id;
  for (std::size_t i = 0; i < out.segments.size(); ++i) by_id[out.segments[i].segment_id] = i;
  for (auto& s : read_segments(txn.exec_prepared(kSegmentsAt.name, scope.account_id, db::int_array_literal(tids),
                                                 db::int_array_literal(times))))
    if (!by_id.count(s.segment_id)) {
      by_id[s.segment_id] = out.segments.size();
      out.segments.push_back(std::move(s));
    }
  // Each alternate to the segment of its transcription holding its middle:
  // the last one starting at or before it (segments of a recording do not
  // overlap), found by binary search in start order.
  std::map<int64_t, std::vector<std::size_t>> by_transcription;
  for (std::size_t i = 0; i < out.segments.size(); ++i) by_transcription[out.segments[i].transcription_id].push_back(i);
  for (auto& [_, list] : by_transcription)
    std::sort(list.begin(), list.end(),
              [&](std::size_t a, std::size_t b) { return out.segments[a].start_ms < out.segments[b].start_ms; });
  std::map<std::size_t, std::map<std::string, double>> mass;
  for (const auto& h : heard) {
    const int64_t mid = (h.start_ms + h.end_ms) / 2;
    const auto& list = by_transcription[h.transcription_id];
    auto after = std::upper_bound(list.begin(), list.end(), mid,
                                  [&](int64_t t, std::size_t i) { return t < out.segments[i].start_ms; });
    if (after == list.begin()) continue;
    const std::size_t i = *std::prev(after);
    if (mid <= out.segments[i].end_ms) mass[i][h.lexeme] += h.posterior;
  }
  for (auto& [i, lexemes_heard] : mass) out.segments[i].heard.assign(lexemes_heard.begin(), lexemes_heard.end());
}

}  // namespace

Retrieved retrieve(pqxx::transaction_base& txn, const AskScope& scope, const std::string& question,
                   const enrichment::HeardMatching& matching, const RetrievalBounds& bounds) {
  Retrieved out;
  out.terms = question_terms(txn, question, matching);
  if (out.terms.empty()) return out;
  const auto lexemes = all_lexemes(out.terms);
  const std::unordered_set<std::string> wanted(lexemes.begin(), lexemes.end());

  if (scope.transcription_id) {
    auto stats = txn.exec_prepared(kTranscriptStats.name, *scope.transcription_id, scope.account_id);
    if (stats.empty()) return out;
    out.collection.segments = stats[0][0].as<double>();
    out.collection.average_length =
        out.collection.segments > 0 ? stats[0][1].as<double>() / out.collection.segments : 0;
    // Every segment holding a lexeme is fetched, so answer_question counts
    // the frequencies in them exactly.
    out.segments =
        read_segments(txn.exec_prepared(kTranscriptSegments.name, *scope.transcription_id, scope.account_id), &wanted);
    if (matching.alternates) add_heard(txn, scope, out);
    return out;
  }

  const std::optional<std::string> ids =
      scope.transcription_ids ? std::optional<std::string>(db::int_array_literal(*scope.transcription_ids))
                              : std::nullopt;
  auto stats = txn.exec_prepared(kLibraryStats.name, scope.account_id, ids);
  out.collection.segments = stats[0][0].as<double>();
  if (out.collection.segments <= 0) return out;
  out.collection.average_length = stats[0][1].as<double>() / out.collection.segments;
  if (ids && out.collection.segments <= bounds.read_whole_max_segments) {
    out.segments = read_segments(txn.exec_prepared(kChosenAll.name, scope.account_id, *ids), &wanted);
    if (matching.alternates) add_heard(txn, scope, out);
    return out;
  }
  // Each lexeme's frequency in the scope, then fetch by the rarest while
  // their segments stay within the fetch bound. A count on the index costs
  // about as much as the rows it counts (2 ms a thousand in an account of a
  // million segments), and a question's few hundred sound- and meaning-alikes
  // hold words like "ran" and "won" (ask_speed.md, issue 34). So in a scope of
  // kEstimateFromSegments or more, a lexeme common enough for the planner's
  // statistics to hold it is not counted: its share of the table's rows,
  // applied to the scope, stands for its frequency (the sampling error of
  // ANALYZE, small for a common word, whose weight in the score is small
  // too). Such a lexeme comes after the rarer ones the segments are fetched
  // by. A smaller scope counts every lexeme: it costs little there, and a
  // share of the whole table says little about a few recordings.
  std::map<std::string, double> common;
  if (out.collection.segments >= bounds.estimate_from_segments)
    for (const auto& r : txn.exec_prepared(kCommonLexemes.name, db::text_array_literal(lexemes)))
      common[r[0].c_str()] = std::max(1.0, std::round(r[1].as<double>() * out.collection.segments));
  std::vector<std::string> counted;
  for (const auto& l : lexemes)
    if (!common.count(l)) counted.push_back(l);
  std::vector<std::pair<double, std::string>> by_df;
  for (const auto& [t, df] : common) {
    out.collection.document_frequency[t] = df;
    by_df.push_back({df, t});
  }
  for (const auto& r : txn.exec_prepared(kLexemeCounts.name, scope.account_id, db::text_array_literal(counted), ids)) {
    const std::string t = r[0].c_str();
    const double df = r[1].as<double>();
    out.collection.document_frequency[t] = df;
    if (df > 0) by_df.push_back({df, t});
  }
  if (!by_df.empty()) {
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
  }
  if (matching.alternates) add_heard(txn, scope, out);
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
