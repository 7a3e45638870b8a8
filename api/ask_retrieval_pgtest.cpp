// Ask retrieval against a real PostgreSQL (a database of its own: the test
// ANALYZEs search_segments, and the planner's statistics are what one of the
// ways of finding frequencies reads). Segments are inserted as the search
// projection leaves them; `terms` is the column PostgreSQL generates.
#include "api/ask_retrieval.h"

#include <algorithm>
#include <set>

#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

const enrichment::HeardMatching kAsWritten{false, false, false};

class AskRetrievalTest : public testing::PgTest {
 protected:
  static void add_transcription(pqxx::connection& conn, int64_t account, int64_t transcription,
                                const std::vector<std::string>& texts) {
    pqxx::work txn(conn);
    static int64_t next_segment = 1;
    int64_t lexemes = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      txn.exec_params(
          "insert into search_segments(segment_id, transcription_id, account_id, transcription_created_at, "
          "start_ms, end_ms, text) values ($1, $2, $3, now(), $4, $5, $6)",
          next_segment++, transcription, account, static_cast<int64_t>(i) * 2000, static_cast<int64_t>(i) * 2000 + 1500,
          texts[i]);
      lexemes += txn.exec_params1("select length(to_tsvector('english', $1))", texts[i])[0].as<int64_t>();
    }
    txn.exec_params("insert into search_stats(transcription_id, account_id, segments, lexemes) values ($1, $2, $3, $4)",
                    transcription, account, static_cast<int64_t>(texts.size()), lexemes);
    txn.commit();
  }
  static std::vector<std::string> repeated(const std::string& text, int n) {
    return std::vector<std::string>(static_cast<std::size_t>(n), text);
  }
  static std::set<int64_t> ids_of(const Retrieved& r) {
    std::set<int64_t> out;
    for (const auto& s : r.segments) out.insert(s.segment_id);
    return out;
  }
};

// A large scope takes a common lexeme's frequency from the planner's share of
// the whole table; a smaller one (the default bound) counts it in the scope.
// Account 2 never says "ran", account 1 says it in 200 of the table's 600
// segments: the estimate is a third of account 2's 300, the count is 0.
TEST_F(AskRetrievalTest, ALargeScopeEstimatesCommonLexemesFromThePlannersStatistics) {
  const testing::PrivateDatabase db;
  auto conn = db::open_connection(db.url());
  auto a = repeated("she ran to the market", 200);
  auto rest = repeated("the weather was calm today", 100);
  a.insert(a.end(), rest.begin(), rest.end());
  add_transcription(*conn, 1, 10, a);
  auto b = repeated("we talked about the weather", 297);
  for (int i = 0; i < 3; ++i) b.push_back("the baker sold fresh bread");
  add_transcription(*conn, 2, 20, b);
  pqxx::nontransaction(*conn).exec("analyze search_segments");

  pqxx::read_transaction txn(*conn);
  const AskScope library{2, std::nullopt, std::nullopt};
  const auto counted = retrieve(txn, library, "Who ran to sell the bread?", kAsWritten);
  EXPECT_EQ(counted.collection.segments, 300);
  EXPECT_EQ(counted.collection.document_frequency.at("ran"), 0);
  EXPECT_EQ(counted.collection.document_frequency.at("bread"), 3);
  EXPECT_EQ(counted.segments.size(), 3u);

  const auto estimated = retrieve(txn, library, "Who ran to sell the bread?", kAsWritten, {kReadWholeMaxSegments, 0});
  EXPECT_EQ(estimated.collection.document_frequency.at("ran"), 100);
  // The fetch is by the rarest lexemes still, and finds the same segments.
  EXPECT_EQ(ids_of(estimated), ids_of(counted));
}

// Chosen transcriptions read whole and matched in process find exactly what
// the index finds, and nothing of a transcription not chosen or of another
// account (whose id may be among the chosen: it matches nothing).
TEST_F(AskRetrievalTest, ChosenTranscriptionsReadWholeFindWhatTheIndexFinds) {
  const testing::PrivateDatabase db;
  auto conn = db::open_connection(db.url());
  add_transcription(*conn, 1, 10,
                    {"the bees left the hive", "a swarm of bees in spring", "the weather was calm", "bread and honey"});
  add_transcription(*conn, 1, 11, {"honey from the hive", "we went home", "the queen bee"});
  add_transcription(*conn, 1, 12, {"bees everywhere", "a hive of bees"});
  add_transcription(*conn, 2, 20, {"their bees and their hive"});

  pqxx::read_transaction txn(*conn);
  const AskScope chosen{1, std::nullopt, std::vector<int64_t>{10, 11, 20}};
  const std::string q = "Why did the bees leave the hive?";
  const auto whole = retrieve(txn, chosen, q, kAsWritten);
  const auto indexed = retrieve(txn, chosen, q, kAsWritten, {0, kEstimateFromSegments});
  EXPECT_EQ(ids_of(whole), ids_of(indexed));
  EXPECT_EQ(ids_of(whole).size(), 4u);  // bees/hive in 10 (twice), 11 (twice: hive, bee)
  for (const auto& s : whole.segments) EXPECT_TRUE(s.transcription_id == 10 || s.transcription_id == 11);
  EXPECT_EQ(whole.collection.segments, 7);
  EXPECT_EQ(whole.collection.segments, indexed.collection.segments);
}

}  // namespace
}  // namespace scribe::api
