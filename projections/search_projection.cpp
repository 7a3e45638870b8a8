// Writes the `search_segments` and `search_stats` tables (inline, in the completing transaction,
// so a transcription is searchable the moment it reads as completed). It runs
// after the transcriptions and segments projections (see registry.cpp), so on
// TranscriptionCompleted the segments of that transcription are already in
// `segments` and its row in `transcriptions`: the rows are copied from there
// in one statement instead of reading and parsing the artifact a second time.
//
// Rebuilding this projection alone replays against the final `segments` and
// `transcriptions` tables. That still gives the live rows: a transcription
// ends with segments exactly when its last completion, retry or deletion was
// a completion, which is also when this projection keeps rows for it.
#include "common/db.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kDelete{"search_segments.delete", "delete from search_segments where transcription_id = $1"};
const db::Statement kDeleteStats{"search_stats.delete", "delete from search_stats where transcription_id = $1"};
// BM25's collection counts (api/ask_retrieval.h), from the rows just copied:
// segments, and their words with repeats (each lexeme's positions).
const db::Statement kStats{"search_stats.insert",
                           "insert into search_stats(transcription_id, account_id, segments, lexemes) "
                           "select s.transcription_id, min(s.account_id), count(*), "
                           "coalesce(sum((select sum(cardinality(u.positions)) from unnest(s.terms) u)), 0) "
                           "from search_segments s where s.transcription_id = $1 group by s.transcription_id"};
const db::Statement kCopy{
    "search_segments.copy",
    "insert into search_segments(segment_id, transcription_id, account_id, transcription_created_at, start_ms, "
    "end_ms, speaker, text) "
    "select s.id, s.transcription_id, t.account_id, t.created_at, s.start_ms, s.end_ms, s.speaker, s.text "
    "from segments s join transcriptions t on t.id = s.transcription_id "
    "where s.transcription_id = $1 and t.status = 'completed'"};

// A transcript revision (domain/transcript_revision.h) replaces the
// recognized segments in search: the latest standing revision's cues, as the
// revisions projection (run just before) left them; with none standing, the
// recognized segments again.
const db::Statement kCopyRevision{
    "search_segments.copy_revision",
    "insert into search_segments(segment_id, transcription_id, account_id, transcription_created_at, start_ms, "
    "end_ms, speaker, text) "
    "select x.id, t.id, t.account_id, t.created_at, x.start_ms, x.end_ms, x.speaker, x.text "
    "from (select cues from transcript_revisions where transcription_id = $1 order by revision desc limit 1) r "
    "cross join jsonb_to_recordset(r.cues) as x(id bigint, start_ms bigint, end_ms bigint, speaker text, text text) "
    "join transcriptions t on t.id = $1 where t.status = 'completed'"};

class SearchProjection final : public Projection {
 public:
  std::string name() const override { return "search"; }
  std::vector<std::string> tables() const override { return {"search_segments", "search_stats"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    if (e.type == events::kTranscriptRevisionSaved || e.type == events::kTranscriptRevisionUndone) {
      const int64_t id = e.data.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kDelete.name, id);
      txn.exec_prepared(kDeleteStats.name, id);
      if (txn.exec_prepared(kCopyRevision.name, id).affected_rows() == 0) txn.exec_prepared(kCopy.name, id);
      txn.exec_prepared(kStats.name, id);
      return;
    }
    if (e.type != events::kTranscriptionCompleted && e.type != events::kTranscriptionRetried &&
        e.type != events::kTranscriptionDeleted)
      return;
    const int64_t id = e.data.at("transcription_id").get<int64_t>();
    // A completion replaces whatever an earlier attempt left (there should be
    // nothing, as a retry clears it, but replays must not trip on it).
    txn.exec_prepared(kDelete.name, id);
    txn.exec_prepared(kDeleteStats.name, id);
    if (e.type == events::kTranscriptionCompleted) {
      txn.exec_prepared(kCopy.name, id);
      txn.exec_prepared(kStats.name, id);
    }
  }
};

}  // namespace

Projection& search_projection() {
  static SearchProjection p;
  return p;
}

}  // namespace scribe::projections
