#include "commands/media_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/error.h"
#include "common/time.h"

namespace scribe::commands {

void add_video(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
               int64_t transcription_id, const std::string& source, const std::string& upload_id,
               const playback::Probe& video) {
  retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        const std::string sid = transcription::stream_id(transcription_id);
        auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, sid));
        if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
        std::optional<double> length = tr.measured_seconds;
        if (!length && tr.duration_seconds > 0) length = tr.duration_seconds;
        playback::check_added_video(source, length, upload_id, video);
        std::vector<eventstore::NewEvent> events = {
            playback::video_added(transcription_id, caller.account_id, upload_id, *video.duration_seconds, now())};
        for (auto& e : events) e.metadata = caller.meta.to_json();
        store.append(txn, {{sid, eventstore::ExpectedVersion::exact(tr.version), std::move(events)}});
        eventstore::EventStore::commit(txn);
      },
      "the transcription is busy; retry the request");
}

}  // namespace scribe::commands
