#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <pqxx/pqxx>
#include <vector>

#include "commands/transcription_commands.h"
#include "domain/ask.h"

// Commands of the ask endpoints (POST .../ask, POST /api/v1/ask, the two
// DELETEs). The allowance is decided on the account's ask stream (domain/ask.h)
// in two steps around the retrieval and answer the caller does in between:
//  - check_ask refuses exactly as the append would (404, 409 not_ready for a
//    transcription that is not completed, 429 qna_quota_exceeded), so a
//    refused call computes nothing;
//  - record_answer decides again on the stream as it is then and appends
//    QuestionAsked (allowance stream) and QuestionAnswered (the entry's own
//    stream) in one transaction at the version it read, so of concurrent asks
//    at the limit only as many as the allowance has left succeed. It holds
//    the locks of the transcriptions the entry is about or quotes meanwhile,
//    so a deletion racing it either redacts the entry or makes it 404.
// A no_answer never reaches record_answer: it is neither saved nor counted.
namespace scribe::commands {

struct AskCheck {
  ask::Allowance allowance;
  ask::Remaining remaining;  // after the ask, if it were counted now
};
AskCheck check_ask(pqxx::connection& conn, const Caller& caller, std::optional<int64_t> transcription_id);

struct RecordedAsk {
  int64_t qna_id = 0;
  ask::Remaining remaining;
};
// `entry`'s qna_id, account_id, key_id and asked_at are filled in here.
// `in_transaction`, when given, runs in the appending transaction once the
// entry is appended (the API stores the idempotent copy of the answer there,
// naming the entry's stream, so that the copy exists exactly when the entry
// does and its redaction finds it).
using WithRecorded = std::function<void(pqxx::work&, const RecordedAsk&)>;
RecordedAsk record_answer(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                          ask::Entry entry, const WithRecorded& in_transaction = {});

// DELETE .../ask/{qnaId}: appends QuestionRedacted and redacts the entry's
// stream (ids stay, text goes) in one transaction; the allowance stream is
// untouched, so the entry keeps counting. A repeat answers the same (no new
// event), and so does an entry redacted already with its deleted
// transcription. 404 when the entry is not the caller's or, with
// `transcription_id`, not on that transcription (which must be the caller's,
// deleted or not; without it, not a library entry); 403 forbidden for a
// system Q&A id of a transcription the caller owns.
// Redacting an entry, here or with its transcription (redact_answers), also
// redacts the stored idempotent responses that quote it (their `reveals` is
// the entry's stream) to ask::redacted_answer, in the same transaction.
void redact_answer(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller, int64_t qna_id,
                   std::optional<int64_t> transcription_id);

// The transcription's deletion redacts the saved entries about it, and the
// library entries citing it, too:
// answers_about reads their ids before the deletion is appended (its
// projection removes the rows), redact_answers redacts their streams after
// it, in the same transaction.
std::vector<int64_t> answers_about(pqxx::transaction_base& txn, int64_t account_id, int64_t transcription_id);
void redact_answers(pqxx::work& txn, const std::vector<int64_t>& qna_ids);

}  // namespace scribe::commands
