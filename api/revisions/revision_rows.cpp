#include "api/revisions/revision_rows.h"

#include "common/db.h"
#include "common/sql_time.h"

namespace scribe::api::revisions {
namespace {

#define SCRIBE_REVISION_COLUMNS \
  "revision, base_revision, cue_count, speaker_names::text, " SCRIBE_SQL_ISO_MS("created_at")

const db::Statement kLatest{"revisions.latest", "select " SCRIBE_REVISION_COLUMNS
                                                ", cues::text "
                                                "from transcript_revisions where transcription_id = $1 "
                                                "order by revision desc limit 1"};
const db::Statement kOne{"revisions.one", "select " SCRIBE_REVISION_COLUMNS
                                          ", cues::text "
                                          "from transcript_revisions where transcription_id = $1 and revision = $2"};
const db::Statement kLatestNames{"revisions.latest_names",
                                 "select speaker_names::text from transcript_revisions where transcription_id = $1 "
                                 "order by revision desc limit 1"};
const db::Statement kList{"revisions.list", "select " SCRIBE_REVISION_COLUMNS
                                            " from transcript_revisions "
                                            "where transcription_id = $1 order by revision desc limit $2"};

RevisionRow row_of(const pqxx::row& r, bool with_cues) {
  RevisionRow out;
  out.revision = r[0].as<int64_t>();
  if (!r[1].is_null()) out.base_revision = r[1].as<int64_t>();
  out.cue_count = r[2].as<int64_t>();
  out.speaker_names = revision::names_from_json(Json::parse(r[3].c_str()));
  out.created_at = r[4].c_str();
  if (with_cues) out.cues = revision::cues_from_json(Json::parse(std::string_view(r[5].c_str(), r[5].size())));
  return out;
}

}  // namespace

std::optional<RevisionRow> load_latest(pqxx::transaction_base& txn, int64_t transcription_id) {
  auto res = txn.exec_prepared(kLatest.name, transcription_id);
  if (res.empty()) return std::nullopt;
  return row_of(res[0], true);
}

std::optional<RevisionRow> load(pqxx::transaction_base& txn, int64_t transcription_id, int64_t revision) {
  auto res = txn.exec_prepared(kOne.name, transcription_id, revision);
  if (res.empty()) return std::nullopt;
  return row_of(res[0], true);
}

revision::SpeakerNames latest_speaker_names(pqxx::transaction_base& txn, int64_t transcription_id) {
  auto res = txn.exec_prepared(kLatestNames.name, transcription_id);
  if (res.empty()) return {};
  return revision::names_from_json(Json::parse(res[0][0].c_str()));
}

std::vector<RevisionRow> list(pqxx::transaction_base& txn, int64_t transcription_id, int limit) {
  std::vector<RevisionRow> out;
  for (const auto& r : txn.exec_prepared(kList.name, transcription_id, limit)) out.push_back(row_of(r, false));
  return out;
}

Json to_json(const RevisionRow& row, bool with_cues) {
  Json out = {{"revision", row.revision},
              {"base_revision", row.base_revision ? Json(*row.base_revision) : Json(nullptr)},
              {"created_at", row.created_at},
              {"cue_count", row.cue_count},
              {"speaker_names", revision::names_to_json(row.speaker_names)}};
  if (with_cues) {
    Json cues = Json::array();
    for (const auto& c : row.cues)
      cues.push_back({{"start_ms", c.start_ms},
                      {"end_ms", c.end_ms},
                      {"text", c.text},
                      {"speaker", c.speaker ? Json(*c.speaker) : Json(nullptr)}});
    out["cues"] = std::move(cues);
  }
  return out;
}

}  // namespace scribe::api::revisions
