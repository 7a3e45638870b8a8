#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "commands/account_commands.h"
#include "domain/transcription.h"

// Commands on transcriptions. Every decision about money is made on the
// account stream: the hold and the creation are appended in one transaction
// (the account stream at its loaded version, the transcription stream new),
// so a job never exists without its hold nor a hold without its job.
namespace scribe::commands {

struct Caller {
  int64_t account_id = 0;
  std::optional<int64_t> key_id;
  std::optional<money::Micros> key_monthly_cap;
  Meta meta;
};

struct Priced {
  int64_t transcription_id = 0;
  double duration_seconds = 0;
  int64_t billed_seconds = 0;
  double billed_minutes = 0;
  money::Micros charge = 0;
  plans::Tier tier = plans::Tier::Free;
  TimePoint expires_at{};  // quotes only
};

// The request must already carry a duration (given, or probed by the caller).
Priced quote(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
             const transcription::Request& req);
Priced create(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
              const transcription::Request& req);
Priced retry(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
             int64_t transcription_id, std::optional<money::Micros> max_charge);
// Deletes the transcription: read rows go, stored content is redacted from
// its events, and a hold still open is released (the work was not delivered).
void remove(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
            int64_t transcription_id);

// Worker side: the end of one attempt. Each settles that attempt's hold and
// records the outcome in one transaction, and is a no-op (false) when the
// attempt is no longer current (retried, deleted, or already finished), so a
// worker that lost its lease cannot settle twice.
//  - completed: charged for the measured duration, at most what was held;
//  - failed: the hold is charged in full (the spec: a retry is a new paid
//    attempt and the original hold is not refunded).
struct Completion {
  double duration_seconds = 0;
  std::optional<std::string> detected_language;
  std::optional<std::string> title;
  Json artifacts = Json::object();
};
bool complete_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id,
                      int attempt, const Completion& done, const Meta& meta);
bool fail_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id, int attempt,
                  const std::string& code, const std::string& message, const Meta& meta);

// Worker side: the recording of attempt `attempt` was decoded and is
// `measured_seconds` long; its hold is made to cover that length
// (domain/measurement.h). Go: recognize it. Refused: the attempt failed with
// the refusing check's code and its hold was released; stop. Gone: the
// attempt is no longer current; stop, record nothing. Safe to call again for
// the same attempt (a restarted worker): it is then Go with nothing appended.
enum class Measurement { Go, Refused, Gone };
Measurement measure_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id,
                            int attempt, double measured_seconds, const Meta& meta);

// Worker side: records the stage the current attempt entered. False (and
// nothing appended) when the attempt is no longer current.
bool record_stage(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id, int attempt,
                  const std::string& stage, const Meta& meta);

// The per-request callback secret: deterministic per transcription, so an
// idempotent replay returns the same value; never stored in an event.
std::string callback_secret(pqxx::connection& conn, int64_t transcription_id);

}  // namespace scribe::commands
