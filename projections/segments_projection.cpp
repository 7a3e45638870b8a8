// Writes the `segments`, `words` and `transcript_alternates` tables (inline, in the completing
// transaction, so a transcription reads as completed only together with its
// transcript). The rows come from the transcript artifact the completion
// event references; a rebuild reads the same artifacts back, and the
// artifacts of deleted transcriptions are gone with their redacted events.
#include "common/db.h"
#include "domain/events.h"
#include "domain/transcript_artifact.h"
#include "projections/artifact_object.h"
#include "projections/projection.h"
#include "projections/segments_projection.h"

namespace scribe::projections {
namespace {

const db::Statement kDeleteSegments{"segments.delete", "delete from segments where transcription_id = $1"};
const db::Statement kDeleteWords{"words.delete", "delete from words where transcription_id = $1"};
// Rows travel as one JSON document each, so a 12-hour transcript is two
// statements rather than a hundred thousand.
// Segments are inserted after the words, with each segment's words packed
// from the rows just written by the encoder of migrations/011_packed_words.sql
// (the form the /subtitles export reads).
const db::Statement kInsertSegments{
    "segments.insert",
    "insert into segments(id, transcription_id, segment_index, start_ms, end_ms, speaker, text, packed_words) "
    "select x.id, $1, x.i, x.s, x.e, x.sp, x.t, p.packed_words from jsonb_to_recordset($2::jsonb) "
    "as x(id bigint, i int, s bigint, e bigint, sp text, t text) "
    "left join scribe_packed_words($1) p on p.segment_id = x.id"};
const db::Statement kInsertWords{
    "words.insert",
    "insert into words(transcription_id, word_index, segment_id, text, start_ms, end_ms, punctuation, speaker, "
    "confidence) select $1, x.i, x.seg, x.t, x.s, x.e, x.p, x.sp, x.c from jsonb_to_recordset($2::jsonb) "
    "as x(i int, seg bigint, t text, s bigint, e bigint, p text, sp text, c real)"};

const db::Statement kDeleteAlternates{"alternates.delete",
                                      "delete from transcript_alternates where transcription_id = $1"};
// The lexeme as to_tsvector('english') writes it for the word alone (null for
// a function word); the account from the transcription's row, which the
// transcriptions projection (inline too) wrote when it was created.
const db::Statement kInsertAlternates{
    "alternates.insert",
    "insert into transcript_alternates(transcription_id, account_id, start_ms, end_ms, word, lexeme, posterior) "
    "select $1, t.account_id, x.s, x.e, x.w, (tsvector_to_array(to_tsvector('english'::regconfig, x.w)))[1], x.p "
    "from jsonb_to_recordset($2::jsonb) as x(w text, s int, e int, p real) "
    "join transcriptions t on t.id = $1"};

int64_t ms(double seconds) { return static_cast<int64_t>(seconds * 1000.0 + 0.5); }

class SegmentsProjection final : public Projection {
 public:
  std::string name() const override { return "segments"; }
  std::vector<std::string> tables() const override { return {"segments", "words", "transcript_alternates"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kTranscriptionRetried || e.type == events::kTranscriptionDeleted) {
      clear(txn, d.at("transcription_id").get<int64_t>());
    } else if (e.type == events::kTranscriptionCompleted) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      clear(txn, id);
      if (!d.contains("artifacts") || !d["artifacts"].contains("transcript")) return;  // redacted
      load(txn, id, d["artifacts"]["transcript"]);
    }
  }

 private:
  static void clear(pqxx::work& txn, int64_t id) {
    txn.exec_prepared(kDeleteSegments.name, id);
    txn.exec_prepared(kDeleteWords.name, id);
    txn.exec_prepared(kDeleteAlternates.name, id);
  }

  static void load(pqxx::work& txn, int64_t id, const Json& ref) {
    auto bytes = load_artifact_object(id, ref, "transcript artifact");
    if (!bytes) return;  // reads then answer artifact_missing rather than a partial transcript
    write_transcript_rows(txn, id, transcript::artifact_from_json(Json::parse(*bytes)));
  }
};

}  // namespace

void write_transcript_rows(pqxx::work& txn, int64_t id, const transcript::TranscriptArtifact& artifact) {
  Json segs = Json::array(), words = Json::array();
  int word_index = 0;
  for (size_t i = 0; i < artifact.segments.size(); ++i) {
    const auto& s = artifact.segments[i];
    Json speaker = s.speaker ? Json(*s.speaker) : Json(nullptr);
    segs.push_back({{"id", s.id}, {"i", i}, {"s", ms(s.start)}, {"e", ms(s.end)}, {"sp", speaker}, {"t", s.text}});
    for (const auto& w : s.words)
      words.push_back({{"i", word_index++},
                       {"seg", s.id},
                       {"t", w.text},
                       {"s", ms(w.start)},
                       {"e", ms(w.end)},
                       {"p", w.punctuation ? Json(*w.punctuation) : Json(nullptr)},
                       {"sp", speaker},
                       {"c", w.confidence}});
  }
  txn.exec_prepared(kInsertWords.name, id, words.dump());
  txn.exec_prepared(kInsertSegments.name, id, segs.dump());
  if (artifact.alternates.empty()) return;
  Json alternates = Json::array();
  for (const auto& a : artifact.alternates)
    alternates.push_back({{"w", a.word}, {"s", ms(a.start)}, {"e", ms(a.end)}, {"p", a.posterior}});
  txn.exec_prepared(kInsertAlternates.name, id, alternates.dump());
}

Projection& segments_projection() {
  static SegmentsProjection p;
  return p;
}

}  // namespace scribe::projections
