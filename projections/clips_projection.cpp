// Writes the `clips` table: one row per clip, its `view` the clip as the API
// shows it before links are signed (domain/clip.h). Inline, so a clip is
// listed the moment POST .../clips answers, the nonce of the next request is
// checked against it, and the queue (status 'queued') holds it at once. The
// deletion of the transcription removes its rows (its files go with the
// transcription's objects).
#include "common/db.h"
#include "domain/clip.h"
#include "domain/events.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{"clips_projection.insert",
                            "insert into clips(id, account_id, transcription_id, status, client_nonce, video_download, "
                            "view, created_at) values ($1, $2, $3, 'queued', $4, $5, $6::jsonb, $7::timestamptz) "
                            "on conflict (id) do nothing"};
const db::Statement kFinish{"clips_projection.finish", "update clips set status = $2, view = $3::jsonb where id = $1"};
const db::Statement kDeleteOf{"clips_projection.delete_of", "delete from clips where transcription_id = $1"};

class ClipsProjection final : public Projection {
 public:
  std::string name() const override { return "clips"; }
  std::vector<std::string> tables() const override { return {"clips"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kClipRequested) {
      // A redacted request belongs to a deleted transcription, whose
      // TranscriptionDeleted (later in the log) removes the row again.
      std::optional<std::string> nonce = optional_field<std::string>(d, "client_nonce");
      txn.exec_prepared(kInsert.name, d.at("clip_id").get<int64_t>(), d.at("account_id").get<int64_t>(),
                        d.at("transcription_id").get<int64_t>(), nonce, d.value("video_download", false),
                        clip::requested_view(d).dump(), d.value("requested_at", e.recorded_at));
    } else if (e.type == events::kClipCompleted || e.type == events::kClipFailed) {
      if (!d.contains("clip")) return;  // redacted
      txn.exec_prepared(kFinish.name, d.at("clip_id").get<int64_t>(),
                        e.type == events::kClipCompleted ? clip::kCompleted : clip::kFailed, d.at("clip").dump());
    } else if (e.type == events::kTranscriptionDeleted) {
      txn.exec_prepared(kDeleteOf.name, d.at("transcription_id").get<int64_t>());
    }
  }
};

}  // namespace

Projection& clips_projection() {
  static ClipsProjection p;
  return p;
}

}  // namespace scribe::projections
