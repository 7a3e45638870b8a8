// Enrichment against a real PostgreSQL: a transcription is completed through
// the commands with a real enrichment artifact (enrichment/), so the inline
// enrichment projection writes its rows; then the posting-chapters cache is
// regenerated through the two-step command, up to the limit and past it,
// also from concurrent callers, and deletion leaves nothing.
#include "commands/enrichment_commands.h"

#include <atomic>
#include <thread>

#include "common/crypto.h"
#include "common/error.h"
#include "common/object_store.h"
#include "domain/limits.h"
#include "enrichment/artifact_store.h"
#include "enrichment/enricher.h"
#include "tests/completed_transcription.h"
#include "tests/pg_fixture.h"
#include "tests/error_of.h"

namespace scribe::commands {
namespace {

using testing::code_of;

class EnrichmentCommands : public testing::PgTest {
 protected:
  using Completed = testing::Completed;
  static Completed completed(pqxx::connection& conn, const std::string& kind = "real") {
    return testing::completed_transcription(conn, kind);
  }

  static int64_t count(pqxx::connection& conn, const std::string& table, int64_t id) {
    pqxx::nontransaction txn(conn);
    return txn.exec_params1("select count(*) from " + table + " where transcription_id = $1", id)[0].as<int64_t>();
  }
  static std::string state(pqxx::connection& conn, int64_t id) {
    pqxx::nontransaction txn(conn);
    auto r = txn.exec_params("select state from enrichments where transcription_id = $1", id);
    return r.empty() ? "" : r[0][0].c_str();
  }
  static Json posting_refs(int64_t id) {
    enrichment::PostingChapters p;
    p.standard.push_back({0, "Regenerated", std::nullopt});
    return {{"posting", enrichment::store_posting(id, p)}};
  }
};

TEST_F(EnrichmentCommands, CompletionWritesTheArtifactsRows) {
  auto conn = connect();
  auto c = completed(*conn);
  ASSERT_FALSE(c.enrichment.sections.empty());
  EXPECT_EQ(state(*conn, c.id), "ok");
  EXPECT_EQ(count(*conn, "sections", c.id), static_cast<int64_t>(c.enrichment.sections.size()));
  EXPECT_EQ(count(*conn, "qna", c.id), static_cast<int64_t>(c.enrichment.qna.size()));
  pqxx::nontransaction txn(*conn);
  auto chapters = txn.exec_params1(
      "select count(*) filter (where kind = 'chapter'), count(*) filter (where kind = "
      "'act') from chapters where transcription_id = $1",
      c.id);
  EXPECT_EQ(chapters[0].as<size_t>(), c.enrichment.chapters.size());
  EXPECT_EQ(chapters[1].as<size_t>(), c.enrichment.acts.size());
  // A section's id is its first segment's id; its title and times are the artifact's.
  auto first = txn.exec_params1(
      "select id, title, start_ms from sections where transcription_id = $1 and section_index = 0", c.id);
  EXPECT_EQ(first[0].as<int64_t>(), c.transcript.segments[c.enrichment.sections[0].first_segment_index].id);
  EXPECT_EQ(first[1].as<std::string>(), c.enrichment.sections[0].title);
  EXPECT_EQ(first[2].as<int64_t>(), static_cast<int64_t>(c.enrichment.sections[0].start * 1000 + 0.5));
  auto posting = txn.exec_params1("select posting->'standard' from enrichments where transcription_id = $1", c.id);
  EXPECT_EQ(Json::parse(posting[0].c_str()).size(), c.enrichment.posting.standard.size());
}

TEST_F(EnrichmentCommands, AFailedOrUnreadableEnrichmentIsRecordedAsSuch) {
  auto conn = connect();
  auto failed = completed(*conn, "failed");
  EXPECT_EQ(state(*conn, failed.id), "failed");
  EXPECT_EQ(count(*conn, "sections", failed.id), 0);
  auto missing = completed(*conn, "missing");
  EXPECT_EQ(state(*conn, missing.id), "missing");
  EXPECT_EQ(count(*conn, "chapters", missing.id), 0);
}

TEST_F(EnrichmentCommands, TenRegenerationsThenTheLimit) {
  auto conn = connect();
  auto c = completed(*conn);
  for (int i = 1; i <= limits::kRegenerationsPerTranscription; ++i) {
    auto checked = check_regeneration(*conn, c.caller, c.id);
    EXPECT_EQ(checked.regen_count, i - 1);
    auto recorded = record_regeneration(store(), *conn, c.caller, c.id, checked.attempt, "budget", posting_refs(c.id));
    EXPECT_EQ(recorded.regen_count, i);
  }
  EXPECT_EQ(code_of([&] { check_regeneration(*conn, c.caller, c.id); }), "regen_limit_exceeded");
  EXPECT_EQ(code_of([&] { record_regeneration(store(), *conn, c.caller, c.id, 1, std::nullopt, posting_refs(c.id)); }),
            "regen_limit_exceeded");
  pqxx::nontransaction txn(*conn);
  auto row = txn.exec_params1(
      "select regen_count, posting->'standard'->0->>'title' from enrichments "
      "where transcription_id = $1",
      c.id);
  EXPECT_EQ(row[0].as<int>(), limits::kRegenerationsPerTranscription);
  EXPECT_EQ(row[1].as<std::string>(), "Regenerated");
}

TEST_F(EnrichmentCommands, ConcurrentRegenerationsStopAtTheLimitExactly) {
  auto conn = connect();
  auto c = completed(*conn);
  const Json refs = posting_refs(c.id);
  std::atomic<int> ok{0}, limited{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&] {
      auto mine = connect();
      try {
        record_regeneration(store(), *mine, c.caller, c.id, 1, std::nullopt, refs);
        ++ok;
      } catch (const Error& e) {
        (e.code() == "regen_limit_exceeded" ? limited : other)++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), limits::kRegenerationsPerTranscription);
  EXPECT_EQ(limited.load(), 16 - limits::kRegenerationsPerTranscription);
  EXPECT_EQ(other.load(), 0);
}

TEST_F(EnrichmentCommands, RegenerationIsRefusedForOthersAndUnfinishedWork) {
  auto conn = connect();
  auto c = completed(*conn);
  Caller stranger = c.caller;
  stranger.account_id = open_account(store(), *conn, unique("other") + "@example.com", plans::Tier::Free, {"t", ""});
  EXPECT_EQ(code_of([&] { check_regeneration(*conn, stranger, c.id); }), "not_found");
  transcription::Request r;
  r.source = "upload";
  r.upload_id = "upl_" + unique("p");
  r.duration_seconds = 30;
  const int64_t processing = create(store(), *conn, c.caller, r).transcription_id;
  EXPECT_EQ(code_of([&] { check_regeneration(*conn, c.caller, processing); }), "not_ready");
}

TEST_F(EnrichmentCommands, DeletionLeavesNoRowsAndNoObjects) {
  auto conn = connect();
  auto c = completed(*conn);
  record_regeneration(store(), *conn, c.caller, c.id, 1, "bees", posting_refs(c.id));
  remove(store(), *conn, c.caller, c.id);
  for (const char* table : {"enrichments", "sections", "chapters", "qna"}) EXPECT_EQ(count(*conn, table, c.id), 0);
  EXPECT_FALSE(object_store().local_path(transcript::transcription_prefix(c.id)).has_value() &&
               std::filesystem::exists(*object_store().local_path(transcript::transcription_prefix(c.id))));
  // The refine prompt (customer text) is redacted from the log.
  pqxx::nontransaction txn(*conn);
  auto leaked = txn.exec_params1("select count(*) from events where stream_id = $1 and data::text like '%bees%'",
                                 transcription::stream_id(c.id));
  EXPECT_EQ(leaked[0].as<int>(), 0);
}

}  // namespace
}  // namespace scribe::commands
