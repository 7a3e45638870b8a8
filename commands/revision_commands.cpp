#include "commands/revision_commands.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "commands/retry_on_conflict.h"
#include "common/db.h"
#include "common/error.h"
#include "domain/events.h"
#include "domain/transcription.h"

namespace scribe::commands {
namespace {

const db::Statement kSubject{"revisions.subject",
                             "select status, coalesce(duration_seconds, 0) from transcriptions "
                             "where id = $1 and account_id = $2"};
const db::Statement kRecognized{"revisions.recognized",
                                "select id, start_ms, end_ms, speaker, text from segments where transcription_id = $1"};
const db::Statement kNewIds{"revisions.new_ids", "select nextval('segment_ids') from generate_series(1, $1::int)"};

using SegmentKey = std::tuple<int64_t, int64_t, std::string, std::optional<std::string>>;

// The transcription as the caller may revise it, under its stream's lock.
void require_revisable(pqxx::work& txn, const Caller& caller, int64_t transcription_id) {
  const std::string sid = transcription::stream_id(transcription_id);
  eventstore::EventStore::lock_stream(txn, sid);
  const auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, sid));
  if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
  transcription::require_completed(tr.status);
}

}  // namespace

SavedRevision save_revision(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                            int64_t transcription_id, const Json& body) {
  // The bounds and the recognized segments first: they never change once the
  // transcription is completed, so they need no lock.
  revision::Bounds bounds;
  std::map<SegmentKey, int64_t> unedited;
  {
    pqxx::read_transaction txn(conn);
    auto meta = txn.exec_prepared(kSubject.name, transcription_id, caller.account_id);
    if (meta.empty()) throw Error::not_found("transcription");
    transcription::require_completed(meta[0][0].c_str());
    int64_t end_ms = static_cast<int64_t>(std::ceil(meta[0][1].as<double>() * 1000.0));
    for (const auto& r : txn.exec_prepared(kRecognized.name, transcription_id)) {
      std::optional<std::string> speaker;
      if (!r[3].is_null()) speaker = r[3].as<std::string>();
      if (speaker) bounds.known_speakers.insert(*speaker);
      end_ms = std::max(end_ms, r[2].as<int64_t>());
      unedited.emplace(SegmentKey{r[1].as<int64_t>(), r[2].as<int64_t>(), r[4].as<std::string>(), speaker},
                       r[0].as<int64_t>());
    }
    bounds.duration_ms = end_ms;
  }
  revision::Draft draft = revision::parse_draft(body, bounds);
  // A cue equal to a recognized segment keeps that segment's id (search hits
  // of unedited text name the same segment as before); the others get new ids.
  std::set<int64_t> used;
  int fresh = 0;
  for (auto& cue : draft.cues) {
    const auto it = unedited.find(SegmentKey{cue.start_ms, cue.end_ms, cue.text, cue.speaker});
    if (it != unedited.end() && used.insert(it->second).second) cue.id = it->second;
    else ++fresh;
  }
  if (fresh > 0) {
    // Drawn outside the appending transaction, which must not have written yet.
    pqxx::nontransaction txn(conn);
    auto ids = txn.exec_prepared(kNewIds.name, fresh);
    std::size_t k = 0;
    for (auto& cue : draft.cues)
      if (cue.id == 0) cue.id = ids[k++][0].as<int64_t>();
  }
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        require_revisable(txn, caller, transcription_id);
        const std::string rsid = revision::stream_id(transcription_id);
        const auto state = revision::fold(eventstore::EventStore::read_stream(txn, rsid));
        auto event = revision::saved(state, transcription_id, caller.account_id, draft, now());
        event.metadata = caller.meta.to_json();
        const int64_t number = event.data.at("revision").get<int64_t>();
        store.append(txn, rsid, eventstore::ExpectedVersion::exact(state.version), {std::move(event)});
        eventstore::EventStore::commit(txn);
        return SavedRevision{number};
      },
      "the transcript is being revised by too many requests at once; retry");
}

UndoneRevision undo_revision(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                             int64_t transcription_id) {
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        require_revisable(txn, caller, transcription_id);
        const std::string rsid = revision::stream_id(transcription_id);
        const auto state = revision::fold(eventstore::EventStore::read_stream(txn, rsid));
        auto event = revision::undone(state, transcription_id, caller.account_id, now());
        event.metadata = caller.meta.to_json();
        UndoneRevision out;
        out.revision = event.data.at("revision").get<int64_t>();
        if (event.data.at("current_revision").is_number_integer())
          out.current = event.data.at("current_revision").get<int64_t>();
        store.append(txn, rsid, eventstore::ExpectedVersion::exact(state.version), {std::move(event)});
        eventstore::EventStore::commit(txn);
        return out;
      },
      "the transcript is being revised by too many requests at once; retry");
}

void redact_revisions(pqxx::work& txn, int64_t transcription_id) {
  eventstore::EventStore::redact_stream(
      txn, revision::stream_id(transcription_id), [](const std::string&, const Json& data) {
        Json out = Json::object();
        for (const char* k : {"transcription_id", "account_id", "revision", "base_revision", "current_revision"})
          if (data.contains(k)) out[k] = data.at(k);
        out["redacted"] = true;
        return out;
      });
}

}  // namespace scribe::commands
