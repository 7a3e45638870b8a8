// The export readers against a real PostgreSQL: a transcription is completed
// through the commands (so the segments projection writes `words` and
// `segments.packed_words` from a real transcript artifact), then read back
// with load_segments_and_words. The words must equal the rows of `words`
// exactly, including texts holding the packed form's separators, multi-byte
// text, empty and null punctuation, a null speaker and a segment without
// words; a rebuild and the backfill of migration 011 must write the same
// packed words.
#include "api/export_rows.h"

#include "commands/transcription_commands.h"
#include "common/crypto.h"
#include "common/object_store.h"
#include "domain/transcript_artifact.h"
#include "projections/projection.h"
#include "projections/runner.h"
#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

using commands::Caller;

class ExportRowsTest : public testing::PgTest {
 protected:
  static int64_t completed_transcription(pqxx::connection& conn, const std::vector<transcript::ArtifactSegment>& segs) {
    const int64_t account =
        commands::open_account(store(), conn, unique("exports") + "@example.com", plans::Tier::Free, {"test", ""});
    commands::deposit(store(), conn, account, 10'000'000, "test", {"test", ""});
    transcription::Request r;
    r.source = "external_url";
    r.url = "https://media.example.com/talk.mp3";
    r.duration_seconds = 60;
    const int64_t id =
        commands::create(store(), conn, Caller{account, std::nullopt, std::nullopt, {"test", ""}}, r).transcription_id;
    transcript::TranscriptArtifact a;
    a.duration_seconds = 60;
    a.language = "en";
    a.engine = "test";
    a.segments = segs;
    {
      pqxx::work txn(conn);
      for (auto& s : a.segments) s.id = txn.exec("select nextval('segment_ids')")[0][0].as<int64_t>();
      txn.commit();
    }
    const std::string bytes = transcript::to_json(a).dump();
    const std::string digest = crypto::sha256_hex(bytes);
    const std::string key = transcript::artifact_key(id, 1, digest);
    object_store().put(key, bytes);
    commands::Completion done;
    done.duration_seconds = 60;
    done.artifacts = {{"transcript", {{"key", key}, {"sha256", digest}}}};
    EXPECT_TRUE(commands::complete_attempt(store(), conn, id, 1, done, {"worker", ""}));
    return id;
  }

  // The words as the export read them before migration 011: every row of
  // `words` in word_index order.
  static std::vector<transcript::Word> word_rows(pqxx::connection& conn, int64_t id) {
    pqxx::read_transaction txn(conn);
    std::vector<transcript::Word> out;
    auto opt = [](const pqxx::field& f) { return f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str()); };
    for (const auto& r : txn.exec_params("select text, punctuation, start_ms, end_ms, speaker, segment_id from words "
                                         "where transcription_id = $1 order by word_index",
                                         id))
      out.push_back({r[0].c_str(), opt(r[1]), r[2].as<int64_t>(), r[3].as<int64_t>(), opt(r[4]), r[5].as<int64_t>(),
                     std::nullopt});
    return out;
  }

  static std::vector<std::string> segment_rows(pqxx::connection& conn, int64_t id) {
    pqxx::read_transaction txn(conn);
    std::vector<std::string> out;
    for (const auto& r :
         txn.exec_params("select s::text from segments s where transcription_id = $1 order by segment_index", id))
      out.emplace_back(r[0].c_str());
    return out;
  }
};

transcript::ArtifactWord word(std::string text, double start, std::optional<std::string> punctuation = std::nullopt) {
  return {std::move(text), start, start + 0.25, 0.9, std::move(punctuation)};
}

void expect_same_words(const std::vector<transcript::Word>& got, const std::vector<transcript::Word>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].text, want[i].text) << i;
    EXPECT_EQ(got[i].punctuation, want[i].punctuation) << i;
    EXPECT_EQ(got[i].start_ms, want[i].start_ms) << i;
    EXPECT_EQ(got[i].end_ms, want[i].end_ms) << i;
    EXPECT_EQ(got[i].speaker, want[i].speaker) << i;
    EXPECT_EQ(got[i].segment_id, want[i].segment_id) << i;
  }
}

TEST_F(ExportRowsTest, PackedWordsEqualTheWordRows) {
  auto conn = connect();
  std::vector<transcript::ArtifactSegment> segs(4);
  segs[0].start = 0.5;
  segs[0].end = 3;
  segs[0].speaker = "SPEAKER_00";
  segs[0].text = "It costs 12,5: dollars, naïve 日本 -1, ok?!";
  segs[0].words = {word("It", 0.5),    word("costs", 0.8), word("12,5:", 1.1, ""), word("dollars", 1.4, ","),
                   word("naïve", 1.7), word("日本", 2.0),  word("-1,", 2.2, ","),  word("ok", 2.5, "?!")};
  segs[1].start = 4;
  segs[1].end = 5;
  segs[1].text = "Nobody knows who.";
  segs[1].words = {word("Nobody", 4), word("knows", 4.3), word("who", 4.6, ".")};
  // A segment without word timings (its packed words are null).
  segs[2].start = 6;
  segs[2].end = 7;
  segs[2].speaker = "SPEAKER_01";
  segs[2].text = "Silence.";
  segs[3].start = 8;
  segs[3].end = 9;
  segs[3].speaker = "SPEAKER_01";
  segs[3].text = "0,0,1,-1:a";
  segs[3].words = {word("0,0,1,-1:a", 8), word("", 8.5, "."), word("1000000000000", 8.7)};
  const int64_t id = completed_transcription(*conn, segs);

  const auto want = word_rows(*conn, id);
  ASSERT_EQ(want.size(), 14u);
  TranscriptRows rows;
  std::vector<transcript::Segment> plain;
  {
    pqxx::read_transaction txn(*conn);
    rows = load_segments_and_words(txn, id);
    plain = load_segments(txn, id);
  }
  expect_same_words(rows.words, want);
  ASSERT_EQ(rows.segments.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(rows.segments[i].id, plain[i].id);
    EXPECT_EQ(rows.segments[i].start_ms, plain[i].start_ms);
    EXPECT_EQ(rows.segments[i].end_ms, plain[i].end_ms);
    EXPECT_EQ(rows.segments[i].speaker, plain[i].speaker);
    EXPECT_EQ(rows.segments[i].text, plain[i].text);
  }
  EXPECT_EQ(rows.segments[1].speaker, std::nullopt);
  EXPECT_EQ(rows.words[8].speaker, std::nullopt);

  // The backfill of migration 011 writes what the projection wrote.
  const auto live = segment_rows(*conn, id);
  {
    pqxx::work txn(*conn);
    txn.exec_params("update segments set packed_words = null where transcription_id = $1", id);
    txn.exec_params(
        "update segments s set packed_words = p.packed_words from scribe_packed_words($1) p "
        "where s.transcription_id = $1 and s.id = p.segment_id",
        id);
    txn.commit();
  }
  EXPECT_EQ(segment_rows(*conn, id), live);

  // So does a rebuild of the projection.
  projections::rebuild(*conn, *projections::find("segments"));
  EXPECT_EQ(segment_rows(*conn, id), live);
  {
    pqxx::read_transaction txn(*conn);
    expect_same_words(load_segments_and_words(txn, id).words, want);
  }
}

TEST_F(ExportRowsTest, TranscriptWithoutWordTimingsHasNoWords) {
  auto conn = connect();
  std::vector<transcript::ArtifactSegment> segs(2);
  segs[0].text = "One.";
  segs[1].start = 2;
  segs[1].end = 3;
  segs[1].text = "Two.";
  const int64_t id = completed_transcription(*conn, segs);
  pqxx::read_transaction txn(*conn);
  const auto rows = load_segments_and_words(txn, id);
  EXPECT_EQ(rows.segments.size(), 2u);
  EXPECT_TRUE(rows.words.empty());
}

}  // namespace
}  // namespace scribe::api
