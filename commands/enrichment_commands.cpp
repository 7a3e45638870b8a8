#include "commands/enrichment_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/error.h"

namespace scribe::commands {
namespace {

transcription::State load(pqxx::connection& conn, const Caller& caller, int64_t transcription_id) {
  pqxx::read_transaction txn(conn);
  auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, transcription::stream_id(transcription_id)));
  if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
  return tr;
}

}  // namespace

transcription::State check_regeneration(pqxx::connection& conn, const Caller& caller, int64_t transcription_id) {
  auto tr = load(conn, caller, transcription_id);
  // The decision refuses or not on the state alone; its event is dropped.
  transcription::posting_regenerated(tr, std::nullopt, {{"posting", nullptr}});
  return tr;
}

transcription::State record_regeneration(const eventstore::EventStore& store, pqxx::connection& conn,
                                         const Caller& caller, int64_t transcription_id, int attempt,
                                         const std::optional<std::string>& refine_prompt, const Json& refs) {
  return retry_on_conflict(
      [&] {
        auto tr = load(conn, caller, transcription_id);
        auto event = transcription::posting_regenerated(tr, refine_prompt, refs);
        if (tr.attempt != attempt)
          throw Error("internal_error", "the transcription was transcribed again while regenerating; retry");
        event.metadata = caller.meta.to_json();
        store.append_and_commit(
            conn,
            {{transcription::stream_id(transcription_id), eventstore::ExpectedVersion::exact(tr.version), {event}}});
        tr.regen_count += 1;
        return tr;
      },
      "the transcription is busy; retry");
}

}  // namespace scribe::commands
