#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "common/json.h"
#include "domain/transcript_revision.h"

// The `transcript_revisions` read model (migrations/064) as the revision
// endpoints and the exports read it. The caller has checked that the
// transcription is the caller's.
namespace scribe::api::revisions {

struct RevisionRow {
  int64_t revision = 0;
  std::optional<int64_t> base_revision;
  int64_t cue_count = 0;
  std::vector<revision::Cue> cues;  // empty unless read with its cues
  revision::SpeakerNames speaker_names;
  std::string created_at;  // ISO 8601
};

// The latest standing revision, or the numbered one; nullopt when absent.
std::optional<RevisionRow> load_latest(pqxx::transaction_base& txn, int64_t transcription_id);
std::optional<RevisionRow> load(pqxx::transaction_base& txn, int64_t transcription_id, int64_t revision);
// The latest one's display names only (empty without a revision).
revision::SpeakerNames latest_speaker_names(pqxx::transaction_base& txn, int64_t transcription_id);
// The newest standing revisions first, without their cues, at most `limit`.
std::vector<RevisionRow> list(pqxx::transaction_base& txn, int64_t transcription_id, int limit);

// {revision, base_revision, created_at, cue_count, speaker_names} and, with
// its cues, cues[{start_ms, end_ms, text, speaker}].
Json to_json(const RevisionRow& row, bool with_cues);

}  // namespace scribe::api::revisions
