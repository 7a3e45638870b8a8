// Search against a real PostgreSQL: transcriptions are created and completed
// through the commands (so the search projection is fed by the real inline
// hook, from real transcript artifacts), then searched with the statements
// the handlers run. Covers case-insensitive substrings, literal % _ and \,
// the spec's order, paging, tenant isolation, deletion, retries, the capped
// total, and that the trigram index answers the query.
#include "api/search_query.h"

#include "commands/transcription_commands.h"
#include "common/crypto.h"
#include "common/object_store.h"
#include "domain/events.h"
#include "domain/limits.h"
#include "domain/transcript_artifact.h"
#include "projections/projection.h"
#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

using commands::Caller;
using commands::Meta;

struct Seg {
  std::string text;
  int64_t start_ms = 0;
  std::optional<std::string> speaker = std::string("SPEAKER_00");
};

class SearchTest : public testing::PgTest {
 protected:
  static int64_t account() {
    auto conn = connect();
    const int64_t id =
        commands::open_account(store(), *conn, unique("search") + "@example.com", plans::Tier::Free, {"test", ""});
    commands::deposit(store(), *conn, id, 10'000'000, "test", {"test", ""});
    return id;
  }
  static Caller caller(int64_t account_id) { return Caller{account_id, std::nullopt, std::nullopt, {"test", ""}}; }

  static int64_t create(pqxx::connection& conn, int64_t account_id, std::optional<std::string> title = "A talk") {
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/talk.mp3";
    r.duration_seconds = 60;
    r.title = std::move(title);
    return commands::create(store(), conn, caller(account_id), r).transcription_id;
  }

  // Completes `attempt` with a transcript artifact holding `segs`, as a
  // worker does; returns the segment ids in order.
  static std::vector<int64_t> complete(pqxx::connection& conn, int64_t id, const std::vector<Seg>& segs,
                                       int attempt = 1) {
    transcript::TranscriptArtifact a;
    a.duration_seconds = 60;
    a.language = "en";
    a.engine = "test";
    std::vector<int64_t> ids;
    {
      pqxx::work txn(conn);
      for (const auto& s : segs) {
        transcript::ArtifactSegment seg;
        seg.id = txn.exec("select nextval('segment_ids')")[0][0].as<int64_t>();
        seg.start = static_cast<double>(s.start_ms) / 1000.0;
        seg.end = seg.start + 1.5;
        seg.speaker = s.speaker;
        seg.text = s.text;
        ids.push_back(seg.id);
        a.segments.push_back(seg);
      }
      txn.commit();
    }
    const std::string bytes = transcript::to_json(a).dump();
    const std::string digest = crypto::sha256_hex(bytes);
    const std::string key = transcript::artifact_key(id, attempt, digest);
    object_store().put(key, bytes);
    commands::Completion done;
    done.duration_seconds = 60;
    done.artifacts = {{"transcript", {{"key", key}, {"sha256", digest}}}};
    EXPECT_TRUE(commands::complete_attempt(store(), conn, id, attempt, done, {"worker", ""}));
    return ids;
  }

  static SearchPage search(pqxx::connection& conn, int64_t account_id, const std::string& q, int limit = 20,
                           int offset = 0, std::optional<std::vector<int64_t>> ids = std::nullopt,
                           std::optional<int64_t> one = std::nullopt) {
    SearchQuery query;
    query.account_id = account_id;
    query.q = q;
    query.limit = limit;
    query.offset = offset;
    query.transcription_ids = std::move(ids);
    query.transcription_id = one;
    pqxx::read_transaction txn(conn);
    return run_search(txn, query);
  }

  static std::vector<int64_t> segment_ids(const SearchPage& page) {
    std::vector<int64_t> out;
    for (const auto& h : page.hits) out.push_back(h.segment_id);
    return out;
  }

  static int64_t count(pqxx::connection& conn, const std::string& sql) {
    pqxx::nontransaction txn(conn);
    return txn.exec(sql)[0][0].as<int64_t>();
  }
};

TEST_F(SearchTest, CaseInsensitiveSubstringsInTheSpecsOrder) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t older = create(*conn, acc);
  const int64_t newer = create(*conn, acc, std::nullopt);
  auto o = complete(*conn, older, {{"We discussed the BUDGET today.", 1'000}, {"Nothing else.", 2'000}});
  auto n = complete(*conn, newer,
                    {{"The budgetary rules came later.", 9'000, std::nullopt},
                     {"Budget first.", 3'000},
                     {"Same moment, budget again.", 3'000}});

  auto page = search(*conn, acc, "Budget");
  EXPECT_EQ(page.total, 4);
  EXPECT_FALSE(page.has_more);
  // Newest transcription first, then start_ms, then segment id.
  EXPECT_EQ(segment_ids(page), (std::vector<int64_t>{n[1], n[2], n[0], o[0]}));
  ASSERT_EQ(page.hits.size(), 4u);
  EXPECT_EQ(page.hits[0].transcription_id, newer);
  EXPECT_FALSE(page.hits[0].title);  // untitled
  EXPECT_EQ(page.hits[0].start_ms, 3'000);
  EXPECT_EQ(page.hits[0].end_ms, 4'500);
  EXPECT_EQ(page.hits[2].text, "The budgetary rules came later.");
  EXPECT_FALSE(page.hits[2].speaker);
  EXPECT_EQ(page.hits[3].title, std::optional<std::string>("A talk"));
  EXPECT_EQ(page.hits[3].speaker, std::optional<std::string>("SPEAKER_00"));

  // The hit resource and its deep link (an external_url: a media fragment).
  Json j = hit_json(page.hits[3], "http://localhost:8080");
  EXPECT_EQ(j["url"], "https://media.example.com/talk.mp3#t=1");
  EXPECT_TRUE(j["title"] == "A talk");
  EXPECT_TRUE(hit_json(page.hits[0], "x")["title"].is_null());

  // Paging: limit, offset, has_more; an offset past the end is empty.
  auto first = search(*conn, acc, "BUDGET", 3, 0);
  EXPECT_EQ(segment_ids(first), (std::vector<int64_t>{n[1], n[2], n[0]}));
  EXPECT_TRUE(first.has_more);
  auto second = search(*conn, acc, "budget", 3, 3);
  EXPECT_EQ(segment_ids(second), (std::vector<int64_t>{o[0]}));
  EXPECT_FALSE(second.has_more);
  EXPECT_EQ(second.total, 4);
  auto beyond = search(*conn, acc, "budget", 3, 10);
  EXPECT_TRUE(beyond.hits.empty());
  EXPECT_EQ(beyond.total, 4);

  // Only some transcriptions; one transcription.
  EXPECT_EQ(segment_ids(search(*conn, acc, "budget", 20, 0, std::vector<int64_t>{older})),
            (std::vector<int64_t>{o[0]}));
  EXPECT_EQ(search(*conn, acc, "budget", 20, 0, std::nullopt, newer).total, 3);
  // Two characters work too (without the trigram index); no match is empty.
  EXPECT_EQ(search(*conn, acc, "ge").total, 4);
  EXPECT_EQ(search(*conn, acc, "budgets").total, 0);
}

TEST_F(SearchTest, PercentUnderscoreAndBackslashAreLiteral) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t id = create(*conn, acc);
  auto s = complete(*conn, id,
                    {{"We are 100% sure.", 0},
                     {"We are 100 percent sure.", 1'000},
                     {"Call it snake_case.", 2'000},
                     {"Call it snakeXcase.", 3'000},
                     {"A back\\slash here.", 4'000},
                     {"A backslash here.", 5'000}});
  EXPECT_EQ(segment_ids(search(*conn, acc, "0% s")), (std::vector<int64_t>{s[0]}));
  EXPECT_EQ(segment_ids(search(*conn, acc, "%")), (std::vector<int64_t>{s[0]}));
  EXPECT_EQ(segment_ids(search(*conn, acc, "e_c")), (std::vector<int64_t>{s[2]}));
  EXPECT_EQ(segment_ids(search(*conn, acc, "k\\s")), (std::vector<int64_t>{s[4]}));
  EXPECT_EQ(segment_ids(search(*conn, acc, "%%")), std::vector<int64_t>{});
  EXPECT_EQ(like_pattern("a%b_c\\d"), "%a\\%b\\_c\\\\d%");
}

TEST_F(SearchTest, AnAccountNeverSeesAnotherAccountsSegments) {
  auto conn = connect();
  const int64_t a = account(), b = account();
  const int64_t ta = create(*conn, a), tb = create(*conn, b);
  const std::string word = "zanzibarian" + std::to_string(ta);  // unique to this run
  auto sa = complete(*conn, ta, {{"Ours: " + word + ".", 0}});
  complete(*conn, tb, {{"Theirs: " + word + ".", 0}});
  EXPECT_EQ(segment_ids(search(*conn, a, word)), (std::vector<int64_t>{sa[0]}));
  EXPECT_EQ(search(*conn, b, word).total, 1);
  // Another account's id in the filter matches nothing, mixed with one's own too.
  EXPECT_EQ(search(*conn, a, word, 20, 0, std::vector<int64_t>{tb}).total, 0);
  EXPECT_EQ(segment_ids(search(*conn, a, word, 20, 0, std::vector<int64_t>{tb, ta})), (std::vector<int64_t>{sa[0]}));
  EXPECT_EQ(search(*conn, a, word, 20, 0, std::nullopt, tb).total, 0);
}

TEST_F(SearchTest, OnlyCompletedTranscriptionsAndNeverDeletedOnes) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t pending = create(*conn, acc);
  const int64_t done = create(*conn, acc);
  const std::string word = "quagmirely" + std::to_string(done);
  EXPECT_EQ(search(*conn, acc, word).total, 0);
  complete(*conn, done, {{"First " + word + ".", 0}, {"Second " + word + ".", 1'000}});
  EXPECT_EQ(search(*conn, acc, word).total, 2);
  EXPECT_EQ(search(*conn, acc, word, 20, 0, std::nullopt, pending).total, 0);

  commands::remove(store(), *conn, caller(acc), done);
  EXPECT_EQ(search(*conn, acc, word).total, 0);
  EXPECT_EQ(count(*conn, "select count(*) from search_segments where transcription_id = " + std::to_string(done)), 0);
}

TEST_F(SearchTest, ARetriedTranscriptionKeepsOnlyItsLatestSegments) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t id = create(*conn, acc);
  const std::string tag = std::to_string(id);
  ASSERT_TRUE(commands::fail_attempt(store(), *conn, id, 1, "no_speech", "silence", {"worker", ""}));
  commands::retry(store(), *conn, caller(acc), id, std::nullopt);
  EXPECT_EQ(search(*conn, acc, "second attempt " + tag).total, 0) << "nothing while the retry runs";
  auto s = complete(*conn, id, {{"The second attempt " + tag + " heard this.", 0}}, 2);
  EXPECT_EQ(segment_ids(search(*conn, acc, "second attempt " + tag)), (std::vector<int64_t>{s[0]}));

  // A TranscriptionRetried clears what a completion left, whatever the order
  // of attempts (the projection alone, in a transaction that is rolled back).
  pqxx::work txn(*conn);
  eventstore::RecordedEvent retried;
  retried.type = events::kTranscriptionRetried;
  retried.data = {{"transcription_id", id}, {"attempt", 3}};
  projections::find("search")->apply(txn, retried);
  EXPECT_EQ(txn.exec("select count(*) from search_segments where transcription_id = " + tag)[0][0].as<int64_t>(), 0);
}

TEST_F(SearchTest, TotalIsCappedAndHasMoreStaysExact) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t id = create(*conn, acc);
  complete(*conn, id, {{"Seed.", 0}});
  // Rows written directly, rolled back at the end: the rebuild test must
  // never see rows that no event explains.
  pqxx::work txn(*conn);
  txn.exec_params(
      "insert into search_segments select -g, $1, $2, now(), g, g + 1, null, 'filler line ' || g "
      "from generate_series(1, $3) g",
      id, acc, limits::kSearchTotalCap + 1'150);
  SearchQuery query;
  query.account_id = acc;
  query.q = "filler";
  query.limit = 100;
  query.offset = 1000;
  auto page = run_search(txn, query);
  EXPECT_EQ(page.total, limits::kSearchTotalCap);
  ASSERT_EQ(page.hits.size(), 100u);
  EXPECT_TRUE(page.has_more);
  EXPECT_EQ(page.hits.front().start_ms, 1001);
  EXPECT_EQ(page.hits.back().start_ms, 1100);
  // Near the end of the matches: has_more says exactly whether any are left.
  txn.exec_params("delete from search_segments where account_id = $1 and start_ms > 1100", acc);
  page = run_search(txn, query);
  EXPECT_EQ(page.hits.size(), 100u);
  EXPECT_FALSE(page.has_more);
  txn.exec_params("delete from search_segments where account_id = $1 and start_ms = 1100", acc);
  EXPECT_EQ(run_search(txn, query).hits.size(), 99u);
  // A walk that runs out of budget (matches too sparse for a deep page) still
  // finds the page: 1,000 matches hidden behind 40,000 newer non-matching rows.
  txn.exec_params(
      "insert into search_segments select -1000000 - g, $1, $2, now() + interval '1 day', g, g + 1, null, "
      "'other words ' || g from generate_series(1, 40000) g",
      id, acc);
  query.offset = 900;
  page = run_search(txn, query);
  EXPECT_EQ(page.total, limits::kSearchTotalCap);
  ASSERT_EQ(page.hits.size(), 100u);
  EXPECT_EQ(page.hits.front().start_ms, 901);
  EXPECT_TRUE(page.has_more);
  query.offset = 1000;
  page = run_search(txn, query);
  ASSERT_EQ(page.hits.size(), 99u);
  EXPECT_EQ(page.hits.back().start_ms, 1099);
  EXPECT_FALSE(page.has_more);
}

// A common substring within transcription_ids is walked transcription by
// transcription (newest first) instead of sorted; pages must be exactly the
// sorted ones, other accounts' ids must match nothing, and a walk that runs
// out of budget must still find its page.
TEST_F(SearchTest, CommonSubstringsWithinTranscriptionIdsPageInTheSpecsOrder) {
  auto conn = connect();
  const int64_t acc = account();
  std::vector<int64_t> ids;
  for (int t = 0; t < 3; ++t) {
    ids.push_back(create(*conn, acc));
    complete(*conn, ids.back(), {{"Seed.", 0}});
  }
  const int64_t foreign = create(*conn, account());
  // Rows written directly, rolled back at the end (see TotalIsCapped...):
  // 700 matching and 300 other rows in each transcription, interleaved.
  pqxx::work txn(*conn);
  for (int64_t id : ids)
    txn.exec_params(
        "insert into search_segments select -(($1::bigint) * 100000 + g), $1, $2, t.created_at, g * 10, g * 10 + 5, "
        "null, case when g % 10 < 7 then 'the filler ' || g else 'other ' || g end "
        "from transcriptions t, generate_series(1, 1000) g where t.id = $1",
        id, acc);
  const std::string wanted_ids =
      "{" + std::to_string(ids[0]) + "," + std::to_string(ids[2]) + "," + std::to_string(foreign) + "}";
  auto reference = [&](int limit, int offset) {
    std::vector<int64_t> out;
    for (const auto& r : txn.exec_params(
             "select segment_id from search_segments where account_id = $1 and transcription_id = any($2::bigint[]) "
             "and text ilike '%filler%' order by transcription_created_at desc, transcription_id desc, start_ms, "
             "segment_id limit $3 offset $4",
             acc, wanted_ids, limit, offset))
      out.push_back(r[0].as<int64_t>());
    return out;
  };
  SearchQuery query;
  query.account_id = acc;
  query.q = "FILLER";
  query.transcription_ids = std::vector<int64_t>{ids[0], ids[2], foreign};
  for (auto [limit, offset] : std::vector<std::pair<int, int>>{{20, 0}, {100, 650}, {100, 1000}, {50, 1370}}) {
    query.limit = limit;
    query.offset = offset;
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto page = run_search(txn, query);
    EXPECT_EQ(page.total, limits::kSearchTotalCap);
    EXPECT_EQ(segment_ids(page), reference(limit, offset));
    EXPECT_EQ(page.has_more, offset + limit < 1400);
  }
  auto plans = explain_search(txn, query, false);
  // Streamed transcription by transcription: only the segments of one
  // transcription are ever sorted, never all matches.
  EXPECT_NE(plans.page.find("Presorted Key: transcriptions.created_at"), std::string::npos) << plans.page;
  EXPECT_EQ(plans.page.find("Seq Scan on search_segments"), std::string::npos) << plans.page;
  // Matches hidden behind 30,000 newer non-matching rows: the walk's budget
  // runs out and the sorted path answers.
  txn.exec_params(
      "update search_segments set text = 'other' where transcription_id = $1 and text ilike '%filler%' "
      "and start_ms <= 3000",
      ids[2]);
  txn.exec_params(
      "insert into search_segments select -(($1::bigint) * 100000 + 50000 + g), $1, $2, t.created_at, -g, -g + 5, "
      "null, 'nothing here' from transcriptions t, generate_series(1, 30000) g where t.id = $1",
      ids[2], acc);
  query.limit = 20;
  query.offset = 0;
  auto page = run_search(txn, query);
  EXPECT_EQ(page.total, limits::kSearchTotalCap);
  EXPECT_EQ(segment_ids(page), reference(20, 0));
}

TEST_F(SearchTest, TheTrigramIndexAnswersSubstringQueries) {
  auto conn = connect();
  const int64_t acc = account();
  // Three transcriptions of 1,000 segments, written the real way and vacuumed
  // (which moves GIN's pending entries into the index proper and records its
  // size, as autovacuum does in a running service); two segments hold the
  // rare word.
  std::vector<int64_t> ids;
  for (int t = 0; t < 3; ++t) {
    const int64_t id = create(*conn, acc);
    std::vector<Seg> segs;
    for (int i = 0; i < 1000; ++i)
      segs.push_back({"Line " + std::to_string(i) +
                          (t == 1 && i % 500 == 7 ? " with a pterodactyl." : " about the weather and the river."),
                      i * 1000});
    complete(*conn, id, segs);
    ids.push_back(id);
  }
  pqxx::nontransaction(*conn).exec("vacuum analyze search_segments");

  pqxx::read_transaction txn(*conn);
  SearchQuery query;
  query.account_id = acc;
  query.q = "PTERODACTYL";
  EXPECT_EQ(run_search(txn, query).total, 2);
  auto plans = explain_search(txn, query, false);
  EXPECT_NE(plans.count.find("Bitmap Index Scan on search_segments_text_trgm"), std::string::npos) << plans.count;
  EXPECT_NE(plans.page.find("Bitmap Index Scan on search_segments_text_trgm"), std::string::npos) << plans.page;
  for (const std::string& plan : {plans.count, plans.page})
    EXPECT_EQ(plan.find("Seq Scan on search_segments"), std::string::npos) << plan;
  // Per transcription as well.
  query.transcription_id = ids[1];
  EXPECT_EQ(run_search(txn, query).total, 2);
  plans = explain_search(txn, query, false);
  EXPECT_NE(plans.count.find("search_segments_text_trgm"), std::string::npos) << plans.count;
  EXPECT_EQ(plans.count.find("Seq Scan on search_segments"), std::string::npos) << plans.count;
}

// Two-character queries have no whole trigram; the bigram index of migration
// 051 answers them, and must find exactly what ILIKE finds, whatever the case,
// accents or punctuation.
TEST_F(SearchTest, TwoCharacterQueriesUseTheBigramIndexAndMissNothing) {
  auto conn = connect();
  const int64_t acc = account();
  const int64_t id = create(*conn, acc);
  std::vector<Seg> segs;
  const std::vector<std::string> rare = {"Quixotic Zephyrs.", "A café ÉTÉ, déjà vu.", "50% off_now \\ (yes)",
                                         "Ends with qz",      "qz starts here",       "x"};
  for (int i = 0; i < 3000; ++i)
    segs.push_back({i % 500 < static_cast<int>(rare.size()) ? rare[static_cast<std::size_t>(i % 500)]
                                                            : "Line " + std::to_string(i) + " about the weather.",
                    i * 1000});
  complete(*conn, id, segs);
  pqxx::nontransaction(*conn).exec("vacuum analyze search_segments");

  for (const std::string q : {"QZ", "qz", "zE", "ÉT", "té", "é,", "% ", "f_", "\\ ", "(y", "s)", ".", "ab"}) {
    if (q.size() < 2) continue;
    int64_t expected = 0;
    {
      pqxx::nontransaction txn(*conn);
      expected = txn.exec_params1("select count(*) from search_segments where account_id = $1 and text ilike $2", acc,
                                  like_pattern(q))[0]
                     .as<int64_t>();
    }
    SCOPED_TRACE("q = " + q);
    auto page = search(*conn, acc, q, 100);
    EXPECT_EQ(page.total, std::min<int64_t>(expected, limits::kSearchTotalCap));  // "ab" is in every "about"
    EXPECT_EQ(static_cast<int64_t>(page.hits.size()), std::min<int64_t>(expected, 100));
  }
  EXPECT_EQ(search(*conn, acc, "qz").total, 12);  // 6 rows each in "Ends with qz" and "qz starts here"
  EXPECT_EQ(search(*conn, acc, "ÉT").total, 6);

  pqxx::read_transaction txn(*conn);
  SearchQuery query;
  query.account_id = acc;
  query.q = "Qz";
  auto plans = explain_search(txn, query, false);
  EXPECT_NE(plans.count.find("search_segments_text_bigrams"), std::string::npos) << plans.count;
  EXPECT_NE(plans.page.find("search_segments_text_bigrams"), std::string::npos) << plans.page;
  // A pair in most segments is counted by the probe of the first rows; its
  // page walks the ordering index. Neither computes bigrams row by row.
  query.q = "ab";
  plans = explain_search(txn, query, false);
  for (const std::string& plan : {plans.count, plans.page}) EXPECT_EQ(plan.find("bigrams"), std::string::npos) << plan;
  // Longer queries keep the trigram index.
  query.q = "zephyr";
  plans = explain_search(txn, query, false);
  EXPECT_NE(plans.count.find("search_segments_text_trgm"), std::string::npos) << plans.count;
}

}  // namespace
}  // namespace scribe::api
