// Writes `transcript_revisions` (inline, in the appending transaction, so a
// saved revision is served at once and an undo is seen by the next read):
// a row per revision still standing (migrations/064_transcript_revisions.sql).
// The search projection runs after it (registry.cpp) and indexes the latest
// row's cues in place of the recognized segments.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{
    "transcript_revisions.insert",
    "insert into transcript_revisions(transcription_id, revision, account_id, base_revision, cue_count, cues, "
    "speaker_names, created_at) values ($1, $2, $3, $4, jsonb_array_length($5::jsonb), $5::jsonb, $6::jsonb, "
    "$7::timestamptz) on conflict (transcription_id, revision) do nothing"};
const db::Statement kDeleteOne{"transcript_revisions.delete_one",
                               "delete from transcript_revisions where transcription_id = $1 and revision = $2"};
const db::Statement kDeleteAll{"transcript_revisions.delete_all",
                               "delete from transcript_revisions where transcription_id = $1"};

class RevisionsProjection final : public Projection {
 public:
  std::string name() const override { return "revisions"; }
  std::vector<std::string> tables() const override { return {"transcript_revisions"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kTranscriptRevisionSaved) {
      // A redacted revision belongs to a deleted transcription: its rows go
      // with the deletion, which a replay meets later.
      if (!d.contains("cues")) return;
      const Json base = d.value("base_revision", Json(nullptr));
      txn.exec_prepared(kInsert.name, d.at("transcription_id").get<int64_t>(), d.at("revision").get<int64_t>(),
                        d.at("account_id").get<int64_t>(),
                        base.is_number_integer() ? std::optional<int64_t>(base.get<int64_t>()) : std::nullopt,
                        d.at("cues").dump(), d.value("speaker_names", Json::object()).dump(),
                        d.at("created_at").get<std::string>());
    } else if (e.type == events::kTranscriptRevisionUndone) {
      txn.exec_prepared(kDeleteOne.name, d.at("transcription_id").get<int64_t>(), d.at("revision").get<int64_t>());
    } else if (e.type == events::kTranscriptionDeleted) {
      txn.exec_prepared(kDeleteAll.name, d.at("transcription_id").get<int64_t>());
    }
  }
};

}  // namespace

Projection& revisions_projection() {
  static RevisionsProjection p;
  return p;
}

}  // namespace scribe::projections
