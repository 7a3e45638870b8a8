// Writes the enrichment read models: `enrichments` (state and the
// posting-chapters cache), `sections`, `chapters` (chapters and acts) and
// `qna` (system Q&A). Inline, in the completing transaction, so a
// transcription reads as completed together with its chapters. The rows come
// from the enrichment artifact the completion event references and from the
// posting-chapters objects of regenerations; a rebuild reads the same objects
// back, and those of deleted transcriptions are gone with their redacted
// events.
#include "common/db.h"
#include "domain/enrichment_artifact.h"
#include "domain/events.h"
#include "projections/artifact_object.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kDeleteEnrichment{"enrichment.delete", "delete from enrichments where transcription_id = $1"};
const db::Statement kDeleteSections{"enrichment.delete_sections", "delete from sections where transcription_id = $1"};
const db::Statement kDeleteChapters{"enrichment.delete_chapters", "delete from chapters where transcription_id = $1"};
const db::Statement kDeleteQna{"enrichment.delete_qna",
                               "delete from qna where transcription_id = $1 and source = 'system'"};
const db::Statement kUpsertEnrichment{
    "enrichment.upsert",
    "insert into enrichments(transcription_id, state, method, generated_at, posting, posting_generated_at, "
    "posting_method, regen_count) values ($1, $2, $3, $4::timestamptz, $5::jsonb, $4::timestamptz, $3, 0) "
    "on conflict (transcription_id) do update set state = excluded.state, method = excluded.method, "
    "generated_at = excluded.generated_at, posting = excluded.posting, "
    "posting_generated_at = excluded.posting_generated_at, posting_method = excluded.posting_method"};
const db::Statement kSetPosting{"enrichment.set_posting",
                                "update enrichments set posting = $2::jsonb, posting_generated_at = $3::timestamptz, "
                                "regen_count = $4 where transcription_id = $1"};
const db::Statement kSetRegenCount{"enrichment.set_regen_count",
                                   "update enrichments set regen_count = $2 where transcription_id = $1"};
// Rows travel as one JSON document per table.
const db::Statement kInsertSections{
    "enrichment.insert_sections",
    "insert into sections(id, transcription_id, section_index, title, summary, start_ms, end_ms, segment_count) "
    "select x.id, $1, x.i, x.t, x.s, x.b, x.e, x.n from jsonb_to_recordset($2::jsonb) "
    "as x(id bigint, i int, t text, s text, b bigint, e bigint, n int)"};
const db::Statement kInsertChapters{
    "enrichment.insert_chapters",
    "insert into chapters(transcription_id, kind, chapter_index, title, summary, start_ms, end_ms) "
    "select $1, x.k, x.i, x.t, x.s, x.b, x.e from jsonb_to_recordset($2::jsonb) "
    "as x(k text, i int, t text, s text, b bigint, e bigint)"};
const db::Statement kInsertQna{
    "enrichment.insert_qna",
    "insert into qna(transcription_id, source, qna_index, question, answer, citations, answer_citations) "
    "select $1, 'system', x.i, x.q, x.a, x.c, x.ac from jsonb_to_recordset($2::jsonb) "
    "as x(i int, q text, a text, c jsonb, ac jsonb)"};

int64_t ms(double seconds) { return static_cast<int64_t>(seconds * 1000.0 + 0.5); }

Json citations_json(const std::vector<enrichment::Citation>& cs) {
  Json out = Json::array();
  for (const auto& c : cs) out.push_back({{"title", c.title}, {"start_ms", ms(c.start)}});
  return out;
}

void write_rows(pqxx::work& txn, int64_t id, const enrichment::EnrichmentArtifact& a) {
  Json sections = Json::array(), chapters = Json::array(), qna = Json::array();
  for (size_t i = 0; i < a.sections.size(); ++i) {
    const auto& s = a.sections[i];
    sections.push_back({{"id", s.first_segment_id},
                        {"i", i},
                        {"t", s.title},
                        {"s", s.summary},
                        {"b", ms(s.start)},
                        {"e", ms(s.end)},
                        {"n", s.segment_count}});
  }
  auto add_chapters = [&](const char* kind, const std::vector<enrichment::Chapter>& list) {
    for (size_t i = 0; i < list.size(); ++i)
      chapters.push_back({{"k", kind},
                          {"i", i},
                          {"t", list[i].title},
                          {"s", list[i].summary},
                          {"b", ms(list[i].start)},
                          {"e", ms(list[i].end)}});
  };
  add_chapters("chapter", a.chapters);
  add_chapters("act", a.acts);
  for (size_t i = 0; i < a.qna.size(); ++i)
    qna.push_back({{"i", i},
                   {"q", a.qna[i].question},
                   {"a", a.qna[i].answer},
                   {"c", citations_json(a.qna[i].citations)},
                   {"ac", citations_json(a.qna[i].answer_citations)}});
  txn.exec_prepared(kInsertSections.name, id, sections.dump());
  txn.exec_prepared(kInsertChapters.name, id, chapters.dump());
  txn.exec_prepared(kInsertQna.name, id, qna.dump());
}

class EnrichmentProjection final : public Projection {
 public:
  std::string name() const override { return "enrichment"; }
  std::vector<std::string> tables() const override { return {"enrichments", "sections", "chapters", "qna"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kTranscriptionRetried || e.type == events::kTranscriptionDeleted) {
      clear(txn, d.at("transcription_id").get<int64_t>());
    } else if (e.type == events::kTranscriptionCompleted) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      clear(txn, id);
      if (!d.contains("artifacts")) return;  // redacted: a deletion follows
      const Json& arts = d["artifacts"];
      if (!arts.contains("enrichment") || !arts["enrichment"].contains("key")) {
        // Enrichment failed in the worker, or the attempt completed before
        // enrichment existed: reads report the artifact missing.
        upsert(txn, id, "failed", std::nullopt, e.recorded_at, nullptr);
        return;
      }
      load_full(txn, id, arts["enrichment"], e.recorded_at);
    } else if (e.type == events::kPostingChaptersRegenerated) {
      if (!d.contains("posting")) return;  // redacted
      const int64_t id = d.at("transcription_id").get<int64_t>();
      const int regen_count = d.value("regen_count", 0);
      if (d.contains("enrichment")) {
        clear(txn, id);
        load_full(txn, id, d["enrichment"], e.recorded_at);
      }
      auto bytes = load_artifact_object(id, d["posting"], "posting-chapters cache");
      if (!bytes) {
        txn.exec_prepared(kSetRegenCount.name, id, regen_count);
        return;
      }
      const Json posting = enrichment::to_json(enrichment::posting_from_json(Json::parse(*bytes)));
      txn.exec_prepared(kSetPosting.name, id, posting.dump(), e.recorded_at, regen_count);
    }
  }

 private:
  static void clear(pqxx::work& txn, int64_t id) {
    txn.exec_prepared(kDeleteEnrichment.name, id);
    txn.exec_prepared(kDeleteSections.name, id);
    txn.exec_prepared(kDeleteChapters.name, id);
    txn.exec_prepared(kDeleteQna.name, id);
  }

  static void upsert(pqxx::work& txn, int64_t id, const char* state, const std::optional<std::string>& method,
                     const std::string& at, const Json& posting) {
    txn.exec_prepared(kUpsertEnrichment.name, id, state, method, at,
                      posting.is_null() ? std::optional<std::string>() : std::optional<std::string>(posting.dump()));
  }

  static void load_full(pqxx::work& txn, int64_t id, const Json& ref, const std::string& at) {
    auto bytes = load_artifact_object(id, ref, "enrichment artifact");
    if (!bytes) {
      upsert(txn, id, "missing", std::nullopt, at, nullptr);
      return;
    }
    const auto artifact = enrichment::artifact_from_json(Json::parse(*bytes));
    upsert(txn, id, "ok", artifact.method, at, enrichment::to_json(artifact.posting));
    write_rows(txn, id, artifact);
  }
};

}  // namespace

Projection& enrichment_projection() {
  static EnrichmentProjection p;
  return p;
}

}  // namespace scribe::projections
