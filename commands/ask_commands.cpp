#include "commands/ask_commands.h"

#include <algorithm>
#include <set>

#include "commands/account_commands.h"
#include "commands/retry_on_conflict.h"
#include "common/db.h"
#include "common/error.h"
#include "domain/transcription.h"

namespace scribe::commands {
namespace {

const db::Statement kNextAskId{"commands.next_ask_id", "select nextval('ask_ids')"};
const db::Statement kSystemQna{
    "commands.system_qna", "select 1 from qna where transcription_id = $1 and source = 'system' and qna_index = $2"};
// Entries asked about the transcription, and library entries that cite it
// (they quote it too).
const db::Statement kAnswersAbout{
    "commands.answers_about",
    "select id from asks where account_id = $2 and (transcription_id = $1 or (transcription_id is null and "
    "citations @> jsonb_build_array(jsonb_build_object('transcription_id', $1::bigint))))"};
// Stored idempotent responses quoting an entry (api/idempotency.h).
const db::Statement kQuotingResponses{"commands.quoting_responses",
                                      "select principal, key, response_body from idempotency_keys "
                                      "where reveals = $1 and response_body is not null for update"};
const db::Statement kRedactResponse{"commands.redact_response",
                                    "update idempotency_keys set response_body = $3 where principal = $1 and key = $2"};

// System Q&A ids are transcription_id * 100 + index (api/enrichment_rows.cpp);
// asked entries' ids start at this (migrations/055_ask.sql).
constexpr int64_t kFirstAskedId = 1'000'000'000'000'000;

transcription::State load_transcription(pqxx::transaction_base& txn, const Caller& caller, int64_t id) {
  auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, transcription::stream_id(id)));
  if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
  return tr;
}

struct Decided {
  ask::State state;
  ask::Allowance allowance;
};

// The allowance stream and the plan, read in one snapshot; with a
// transcription, also that it is the caller's and completed.
Decided read_state(pqxx::transaction_base& txn, const Caller& caller, std::optional<int64_t> transcription_id) {
  if (transcription_id) transcription::require_completed(load_transcription(txn, caller, *transcription_id).status);
  const auto account = load_account(txn, caller.account_id);
  const auto allowance = ask::allowance_of(account.plan);
  const std::string sid = ask::allowance_stream_id(caller.account_id);
  if (allowance.per_transcript) return {ask::fold(eventstore::EventStore::read_stream(txn, sid)), allowance};
  // Only the day counts: read from the oldest ask the last decision still
  // had inside its window (at most the plan's daily number of events).
  const auto last = eventstore::EventStore::last_event(txn, sid);
  if (!last) return {ask::State{}, allowance};
  const int64_t from = last->data.value("window_from", int64_t{1});
  auto state = ask::fold(eventstore::EventStore::read_stream(txn, sid, std::max<int64_t>(0, from - 1)));
  state.version = last->version;
  return {std::move(state), allowance};
}

// The entry's text leaves everything that keeps it: the events of its
// stream, and the responses stored for an Idempotency-Key replay (written
// with the entry, so found here whenever the entry is).
void redact_entry_stream(pqxx::work& txn, int64_t qna_id) {
  const std::string sid = ask::entry_stream_id(qna_id);
  eventstore::EventStore::redact_stream(txn, sid,
                                        [](const std::string&, const Json& data) { return ask::redacted_data(data); });
  for (const auto& row : txn.exec_prepared(kQuotingResponses.name, sid)) {
    const Json body = Json::parse(row[2].c_str(), nullptr, false);
    txn.exec_prepared(kRedactResponse.name, row[0].c_str(), row[1].c_str(), ask::redacted_answer(body).dump());
  }
}

}  // namespace

AskCheck check_ask(pqxx::connection& conn, const Caller& caller, std::optional<int64_t> transcription_id) {
  pqxx::read_transaction txn(conn);
  const auto d = read_state(txn, caller, transcription_id);
  const TimePoint at = now();
  ask::check(d.state, d.allowance, transcription_id, at);
  return {d.allowance, ask::remaining_after(d.state, d.allowance, transcription_id, at)};
}

RecordedAsk record_answer(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                          ask::Entry entry, const WithRecorded& in_transaction) {
  int64_t qna_id;
  {
    // Drawn outside the appending transaction (see account_commands.cpp).
    pqxx::nontransaction txn(conn);
    qna_id = txn.exec_prepared1(kNextAskId.name)[0].as<int64_t>();
  }
  entry.qna_id = qna_id;
  entry.account_id = caller.account_id;
  entry.key_id = caller.key_id;
  // The transcriptions the entry is about or quotes: their deletion must
  // either see this entry (and redact it) or refuse it. Both take the
  // transcription stream's lock before reading (remove() in
  // transcription_commands.cpp), so one of the two goes first.
  std::set<int64_t> quoted;
  if (entry.transcription_id) quoted.insert(*entry.transcription_id);
  for (const auto& c : entry.citations)
    if (c.contains("transcription_id") && c["transcription_id"].is_number_integer())
      quoted.insert(c["transcription_id"].get<int64_t>());
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        for (int64_t id : quoted)  // ascending: the order every stream lock is taken in
          eventstore::EventStore::lock_stream(txn, transcription::stream_id(id));
        for (int64_t id : quoted) load_transcription(txn, caller, id);
        const auto d = read_state(txn, caller, entry.transcription_id);
        const TimePoint at = now();
        entry.asked_at = at;
        auto counted =
            ask::asked(d.state, d.allowance, caller.account_id, qna_id, entry.transcription_id, caller.key_id, at);
        auto saved = ask::answered(entry);
        counted.metadata = caller.meta.to_json();
        saved.metadata = caller.meta.to_json();
        store.append(txn, {{ask::allowance_stream_id(caller.account_id),
                            eventstore::ExpectedVersion::exact(d.state.version),
                            {counted}},
                           {ask::entry_stream_id(qna_id), eventstore::ExpectedVersion::no_stream(), {saved}}});
        const RecordedAsk recorded{qna_id, ask::remaining_after(d.state, d.allowance, entry.transcription_id, at)};
        if (in_transaction) in_transaction(txn, recorded);
        eventstore::EventStore::commit(txn);
        return recorded;
      },
      "the account is asking too many questions at once; retry");
}

void redact_answer(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller, int64_t qna_id,
                   std::optional<int64_t> transcription_id) {
  if (qna_id < kFirstAskedId) {
    // A system entry's id names its transcription: forbidden when it is the
    // caller's (and the one in the path), otherwise nothing of theirs.
    const int64_t of = qna_id / 100;
    pqxx::read_transaction txn(conn);
    if (qna_id > 0 && (!transcription_id || *transcription_id == of)) {
      load_transcription(txn, caller, of);
      if (!txn.exec_prepared(kSystemQna.name, of, static_cast<int>(qna_id % 100)).empty())
        throw Error("forbidden", "system-generated Q&A cannot be deleted; only asked questions can");
    }
    throw Error::not_found("Q&A entry");
  }
  retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        const std::string sid = ask::entry_stream_id(qna_id);
        // The path's transcription must be the caller's, deleted or not: its
        // deletion redacted the entries about it, so under a deleted one an
        // entry answers the same 200 as a repeat (the entry is still checked
        // to be the caller's and on that transcription).
        if (transcription_id) {
          const auto tr = transcription::fold(
              eventstore::EventStore::read_stream(txn, transcription::stream_id(*transcription_id)));
          if (!tr.exists || tr.account_id != caller.account_id) throw Error::not_found("transcription");
        }
        auto entry = ask::fold_entry(eventstore::EventStore::read_stream(txn, sid));
        if (!entry || entry->entry.account_id != caller.account_id || entry->entry.transcription_id != transcription_id)
          throw Error::not_found("Q&A entry");
        if (entry->redacted) return;  // the same 200 again
        auto e = ask::redacted(entry->entry);
        e.metadata = caller.meta.to_json();
        store.append(txn, sid, eventstore::ExpectedVersion::exact(entry->version), {e});
        redact_entry_stream(txn, qna_id);
        eventstore::EventStore::commit(txn);
      },
      "the Q&A entry is busy; retry");
}

std::vector<int64_t> answers_about(pqxx::transaction_base& txn, int64_t account_id, int64_t transcription_id) {
  std::vector<int64_t> ids;
  for (const auto& r : txn.exec_prepared(kAnswersAbout.name, transcription_id, account_id))
    ids.push_back(r[0].as<int64_t>());
  return ids;
}

void redact_answers(pqxx::work& txn, const std::vector<int64_t>& qna_ids) {
  for (int64_t id : qna_ids) redact_entry_stream(txn, id);
}

}  // namespace scribe::commands
