// Writes `realtime_sessions` and `realtime_grants` (inline) from the account
// stream's realtime events (domain/realtime.h): a session is listed, and a
// grant takes effect, in the transaction of its event. The operational state
// of a live session (ticket, connection, persisted audio) is not here: it is
// `realtime_live`, written by commands/realtime_commands.cpp.
#include "common/db.h"
#include "domain/events.h"
#include "domain/realtime.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kStarted{
    "realtime_projection.started",
    "insert into realtime_sessions(id, account_id, key_id, transcription_id, language, "
    "cap_minutes, hold_id, status, created_at) "
    "values ($1, $2, $3, $4, $5, $6, $7, 'live', $8::timestamptz) on conflict (id) do nothing"};
const db::Statement kEnding{"realtime_projection.ending",
                            "update realtime_sessions set status = 'ending', end_reason = $2 "
                            "where id = $1 and status = 'live'"};
const db::Statement kEnded{"realtime_projection.ended",
                           "update realtime_sessions set status = 'ended', ended_at = $2::timestamptz, "
                           "end_reason = $3, audio_seconds = $4, charge_micros = $5 where id = $1"};
const db::Statement kGrant{"realtime_projection.grant",
                           "insert into realtime_grants(account_id, key_id, granted_at) "
                           "values ($1, $2, $3::timestamptz) on conflict do nothing"};
const db::Statement kRevoke{"realtime_projection.revoke",
                            "delete from realtime_grants where account_id = $1 and key_id = $2"};

class RealtimeProjection final : public Projection {
 public:
  std::string name() const override { return "realtime"; }
  std::vector<std::string> tables() const override { return {"realtime_sessions", "realtime_grants"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kRealtimeSessionStarted) {
      txn.exec_prepared(kStarted.name, d.at("session_id").get<std::string>(), d.at("account_id").get<int64_t>(),
                        optional_field<int64_t>(d, "key_id"), d.at("transcription_id").get<int64_t>(),
                        d.value("language", "auto"), d.at("cap_minutes").get<int>(),
                        optional_field<std::string>(d, "hold_id"), e.recorded_at);
    } else if (e.type == events::kRealtimeSessionEndRequested) {
      txn.exec_prepared(kEnding.name, d.at("session_id").get<std::string>(), d.value("reason", ""));
    } else if (e.type == events::kRealtimeSessionEnded) {
      txn.exec_prepared(kEnded.name, d.at("session_id").get<std::string>(), e.recorded_at, d.value("reason", ""),
                        d.value("billed_seconds", int64_t{0}), d.value("charge_micros", int64_t{0}));
    } else if (e.type == events::kApiKeyRealtimeGranted) {
      txn.exec_prepared(kGrant.name, d.at("account_id").get<int64_t>(), d.at("key_id").get<int64_t>(), e.recorded_at);
    } else if (e.type == events::kApiKeyRealtimeRevoked || e.type == events::kApiKeyRevoked) {
      txn.exec_prepared(kRevoke.name, d.at("account_id").get<int64_t>(), d.at("key_id").get<int64_t>());
    } else if (e.type == events::kAccountRealtimeGranted) {
      txn.exec_prepared(kGrant.name, d.at("account_id").get<int64_t>(), int64_t{0}, e.recorded_at);
    } else if (e.type == events::kAccountRealtimeRevoked) {
      txn.exec_prepared(kRevoke.name, d.at("account_id").get<int64_t>(), int64_t{0});
    }
  }
};

}  // namespace

Projection& realtime_projection() {
  static RealtimeProjection p;
  return p;
}

}  // namespace scribe::projections
