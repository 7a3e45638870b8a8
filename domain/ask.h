#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/plans.h"
#include "eventstore/event.h"

// The Q&A allowance of an account (POST .../ask, POST /api/v1/ask): how many
// questions it may have answered, decided on the account's own ask stream
// (`asks-<account_id>`, one QuestionAsked per saved answer), never on a read
// model and never on the wallet. The entry itself (question, answer,
// citations) lives on a stream of its own, `qna-<id>`, so that redacting it
// leaves the allowance's count intact.
namespace scribe::ask {

std::string allowance_stream_id(int64_t account_id);
std::string entry_stream_id(int64_t qna_id);

// Per plan; nullopt is unlimited. The daily count is over a rolling 24 h
// window; the per-transcript count is over the transcription's whole life
// (it never resets, so a refusal for it carries no retry_after).
struct Allowance {
  std::optional<int> per_day;
  std::optional<int> per_transcript;
};
Allowance allowance_of(plans::Tier tier);

inline constexpr int64_t kWindowSeconds = 24 * 3600;

struct Asked {
  TimePoint at;
  std::optional<int64_t> transcription_id;  // null for a library ask
  int64_t qna_id = 0;
  int64_t version = 0;  // of its QuestionAsked event
};

struct State {
  std::vector<Asked> asked;  // in stream order, which is time order
  int64_t version = 0;
  int asked_since(TimePoint since) const;
  int asked_about(int64_t transcription_id) const;
  // The version of the oldest ask inside the 24 h window ending at `at` (the
  // next version when none is): events before it never count toward the day
  // again, since time only moves on. QuestionAsked records it, so a plan
  // without a per-transcript limit reads only that far back
  // (commands/ask_commands.cpp), whatever the stream's length.
  int64_t window_from(TimePoint at) const;
};

void apply(State& s, const std::string& type, const Json& data, int64_t version = 0);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// What is left after one more ask (nullopt: unlimited).
struct Remaining {
  std::optional<int> per_day;
  std::optional<int> per_transcript;  // nullopt too for a library ask
};

// Throws 429 qna_quota_exceeded when one more ask at `at` is over the
// allowance: scope `transcript` (checked first: waiting does not help) or
// `day` with retry_after, the seconds until the oldest ask in the window
// leaves it (at least 1).
void check(const State& s, const Allowance& a, std::optional<int64_t> transcription_id, TimePoint at);
// What is left once the ask is counted; call after check().
Remaining remaining_after(const State& s, const Allowance& a, std::optional<int64_t> transcription_id, TimePoint at);

// The decision: check() then the QuestionAsked event.
// {account_id, qna_id, transcription_id|null, key_id|null, asked_at, window_from}
eventstore::NewEvent asked(const State& s, const Allowance& a, int64_t account_id, int64_t qna_id,
                           std::optional<int64_t> transcription_id, std::optional<int64_t> key_id, TimePoint at);

// The entry's events, on entry_stream_id(qna_id).
struct Entry {
  int64_t qna_id = 0;
  int64_t account_id = 0;
  std::optional<int64_t> transcription_id;
  std::optional<int64_t> key_id;
  std::string question;
  std::string answer;
  Json citations = Json::array();  // [{marker, section_id, transcription_id, title, start_ms, quote}]
  std::string model;
  TimePoint asked_at;
};
eventstore::NewEvent answered(const Entry& e);
// QuestionRedacted {qna_id, account_id, transcription_id|null}, and the data
// a redacted event of the entry's stream keeps (ids only, no text).
eventstore::NewEvent redacted(const Entry& e);
Json redacted_data(const Json& data);

// The entry as folded from its stream: nullopt when the stream is empty.
struct EntryState {
  Entry entry;
  bool redacted = false;
  int64_t version = 0;
};
std::optional<EntryState> fold_entry(const std::vector<eventstore::RecordedEvent>& events);

// The 200 body of an ask (either kind) as its idempotent replay gives it once
// the entry it saved is redacted: the same ids, counters and model, no text
// (`answer` empty, `citations` empty) and `redacted: true`. Fields it does
// not know are dropped, so no text can stay behind in one.
Json redacted_answer(const Json& body);

}  // namespace scribe::ask
