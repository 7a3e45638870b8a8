// The revision commands against a real PostgreSQL: concurrent saves from the
// same base (exactly one wins, the others conflict), the read models a save
// and an undo leave (transcript_revisions, search_segments), and the
// deletion of the transcription (rows gone, stream redacted).
#include "commands/revision_commands.h"

#include <atomic>
#include <thread>

#include "common/error.h"
#include "tests/completed_transcription.h"
#include "tests/pg_fixture.h"

namespace scribe::commands {
namespace {

class RevisionCommands : public testing::PgTest {
 protected:
  static int64_t scalar(pqxx::connection& conn, const std::string& sql, int64_t arg) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1(sql, arg)[0].as<int64_t>();
  }
  // The recognized segments as cues, the first one's text replaced.
  static Json body(const testing::Completed& c, std::optional<int64_t> base, const std::string& first_text) {
    Json cues = Json::array();
    for (const auto& s : c.transcript.segments)
      cues.push_back({{"start_ms", static_cast<int64_t>(s.start * 1000 + 0.5)},
                      {"end_ms", static_cast<int64_t>(s.end * 1000 + 0.5)},
                      {"text", s.text},
                      {"speaker", s.speaker ? Json(*s.speaker) : Json(nullptr)}});
    cues[0]["text"] = first_text;
    return {{"base_revision", base ? Json(*base) : Json(nullptr)}, {"cues", cues}};
  }
};

TEST_F(RevisionCommands, OfConcurrentSavesFromOneBaseExactlyOneWins) {
  auto setup = connect();
  const auto c = testing::completed_transcription(*setup);
  constexpr int kWriters = 8;
  std::atomic<int> saved{0}, conflicts{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i)
    threads.emplace_back([&, i] {
      auto conn = connect();
      try {
        save_revision(store(), *conn, c.caller, c.id, body(c, std::nullopt, "Writer " + std::to_string(i)));
        ++saved;
      } catch (const Error& e) {
        if (e.extras().value("reason", "") == "revision_conflict") ++conflicts;
        else ++other;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(saved.load(), 1);
  EXPECT_EQ(conflicts.load(), kWriters - 1);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(scalar(*setup, "select count(*) from transcript_revisions where transcription_id = $1", c.id), 1);
}

TEST_F(RevisionCommands, SearchFollowsSavesAndUndoAndDeletionRemovesEverything) {
  auto conn = connect();
  const auto c = testing::completed_transcription(*conn);
  const int64_t segments = static_cast<int64_t>(c.transcript.segments.size());
  const std::string find = "select count(*) from search_segments where transcription_id = $1 and text ilike ";
  EXPECT_EQ(save_revision(store(), *conn, c.caller, c.id, body(c, std::nullopt, "Marmalade volcano.")).revision, 1);
  EXPECT_EQ(scalar(*conn, find + "'%marmalade%'", c.id), 1);
  EXPECT_EQ(scalar(*conn, "select count(*) from search_segments where transcription_id = $1", c.id), segments);
  EXPECT_EQ(scalar(*conn, "select segments from search_stats where transcription_id = $1", c.id), segments);
  // The unedited cues keep their recognized segment ids.
  EXPECT_EQ(scalar(*conn,
                   "select count(*) from search_segments s join segments g on g.id = s.segment_id "
                   "where s.transcription_id = $1",
                   c.id),
            segments - 1);
  EXPECT_EQ(save_revision(store(), *conn, c.caller, c.id, body(c, 1, "Quince lava.")).revision, 2);
  EXPECT_EQ(scalar(*conn, find + "'%marmalade%'", c.id), 0);
  EXPECT_EQ(scalar(*conn, find + "'%quince%'", c.id), 1);
  const auto undone = undo_revision(store(), *conn, c.caller, c.id);
  EXPECT_EQ(undone.revision, 2);
  EXPECT_EQ(undone.current, 1);
  EXPECT_EQ(scalar(*conn, find + "'%quince%'", c.id), 0);
  EXPECT_EQ(scalar(*conn, find + "'%marmalade%'", c.id), 1);
  EXPECT_FALSE(undo_revision(store(), *conn, c.caller, c.id).current.has_value());
  EXPECT_EQ(scalar(*conn, find + "'%marmalade%'", c.id), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from search_segments where transcription_id = $1", c.id), segments);

  EXPECT_EQ(save_revision(store(), *conn, c.caller, c.id, body(c, std::nullopt, "Saffron.")).revision, 3);
  remove(store(), *conn, c.caller, c.id);
  EXPECT_EQ(scalar(*conn, "select count(*) from transcript_revisions where transcription_id = $1", c.id), 0);
  EXPECT_EQ(scalar(*conn, "select count(*) from search_segments where transcription_id = $1", c.id), 0);
  EXPECT_EQ(scalar(*conn,
                   "select count(*) from events where stream_id = 'revisions-' || $1::text and "
                   "(data ? 'cues' or redacted_at is null)",
                   c.id),
            0);
  // Another save is a 404 now.
  try {
    save_revision(store(), *conn, c.caller, c.id, body(c, 3, "Late."));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "not_found");
  }
}

}  // namespace
}  // namespace scribe::commands
