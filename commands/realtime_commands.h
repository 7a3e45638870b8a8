#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "commands/transcription_commands.h"
#include "domain/realtime.h"

// Commands on realtime sessions (domain/realtime.h). Money is decided on the
// account stream: the start appends RealtimeSessionStarted + WalletHoldPlaced
// (the full cap held and reserved against the key's monthly cap) together with
// the live transcription's TranscriptionLiveStarted and the session's
// `realtime_live` row in ONE transaction, so a failure anywhere leaves
// nothing held ("500, hold released"); the end appends RealtimeSessionEnded
// + WalletHoldSettled (or Released, for no audio) at the account's loaded
// version while holding the session's `realtime_live` row, so whichever of
// DELETE, Terminate, the cap, housekeeping or a restarted process ends it
// first settles it and every other attempt appends nothing.
//
// The ticket, the connection's generation and heartbeat and the persisted
// audio are operational rows (`realtime_live`, `realtime_audio_pieces`,
// `realtime_turns`), written here and never from the log.
namespace scribe::commands {

struct SessionTicket {
  std::string session_id;
  int64_t transcription_id = 0;
  int cap_minutes = 0;
  std::string ticket;  // plaintext, returned once; only its SHA-256 is stored
  TimePoint ticket_expires_at{};
  money::Micros held = 0;  // 0 on subscription plans
};

// POST /realtime/sessions. `body`: the request's JSON (null when none).
// `console`: the caller is the first-party console's sign-in (an OAuth
// principal without a key): access then follows the account's flag, and a
// key's access its own grant. Errors in the spec's order:
// unsupported_language, unsupported_pipeline (not enabled), invalid_request
// (cap_minutes), 429 rate_limited (reason concurrent_jobs: live sessions and
// active jobs against the plan's max_concurrent_jobs), insufficient_funds,
// spend_cap_exceeded.
SessionTicket start_session(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                            const Json& body, bool console, int ticket_ttl_seconds = realtime::kTicketTtlSeconds);

// POST .../{id}/resume: a fresh ticket for the same live session. 404
// not_found when unknown or another account's; 410 gone (reason
// session_ended or session_stale) when it ended, is ending or went stale.
SessionTicket resume_session(pqxx::connection& conn, const Caller& caller, const std::string& session_id,
                             int stale_seconds, int ticket_ttl_seconds = realtime::kTicketTtlSeconds);

// What the socket needs of a session once its ticket is redeemed.
struct LiveSession {
  std::string session_id;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;
  int64_t transcription_id = 0;
  std::string language;
  int cap_minutes = 0;
  TimePoint created_at{};
  int64_t samples_persisted = 0;  // audio received and persisted so far
  int last_turn_order = 0;        // the last final stored
  bool resumed = false;           // a connection had it before
};
struct Redeemed {
  std::optional<LiveSession> session;              // set when redeemed
  std::optional<realtime::TicketRefusal> refusal;  // set otherwise
};
// Redeems a ticket atomically, once: of two concurrent redeems exactly one
// gets the session. Refusals: Invalid (unknown), Expired, Used, Ended
// (the session ended or its end was requested).
Redeemed redeem_ticket(pqxx::connection& conn, const std::string& ticket);

// The connection that redeemed a ticket takes the session over: a new
// generation, owned by `owner` (process and connection). Any older
// connection sees its generation stale (heartbeat/persist_piece refuse it)
// and closes with close_code::kSuperseded. nullopt when the session ended.
std::optional<int> claim_connection(pqxx::connection& conn, const std::string& session_id, const std::string& owner);

enum class Heartbeat { Live, EndRequested, Superseded, Ended };
// The owner's heartbeat (keeps the session from going stale); tells the
// owner when DELETE (on any process) asked for the end, or a resume took over.
Heartbeat heartbeat(pqxx::connection& conn, const std::string& session_id, int generation);

// Persists one accepted piece of audio (16 kHz mono s16le, even length):
// the object realtime/<sid>/<seq 8 digits>.pcm first, then its row and
// samples_persisted in one statement. `start_sample` must be the samples
// persisted so far (pieces are contiguous). False, with nothing counted, when
// the generation is stale, the session ended, or the piece is out of order.
bool persist_piece(pqxx::connection& conn, const std::string& session_id, int generation, int64_t seq,
                   int64_t start_sample, const std::string& pcm);

// Stores a final turn as sent (replayed after a resume). False when the
// generation is stale or the session ended.
bool record_turn(pqxx::connection& conn, const std::string& session_id, int generation, int turn_order,
                 const Json& payload);
// Finals after `after_turn_order`, in order.
std::vector<Json> turns_after(pqxx::connection& conn, const std::string& session_id, int after_turn_order);

// DELETE .../{id} (account_id set: 404 unless the account's) or the socket's
// Terminate, cap or idle (account_id nullopt): marks the end requested
// (RealtimeSessionEndRequested, once) so the owner, on its next heartbeat,
// sends the finals and ends it; a session no connection owns (never
// connected, or its owner silent for 10 s) is ended and settled at once.
// Returns "ending" (this call asked for the end) or "ended" (it had ended).
std::string request_end(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                        std::optional<int64_t> account_id, const std::string& reason, const Meta& meta);

struct SessionEnd {
  bool ended_now = false;  // this call appended the end (false: it had ended)
  int64_t samples = 0;
  int64_t billed_seconds = 0;
  money::Micros charge = 0;
  std::string reason;
};
// Ends the session and settles its hold exactly once (see above), then gives
// the transcription its audio (finish_transcription). Throws not_found for an
// unknown session.
SessionEnd end_session(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                       const std::string& reason, const Meta& meta);

// After the end, idempotent: no audio -> the transcription is cancelled;
// otherwise the pieces are joined into one 16 kHz mono WAV kept as the
// transcription's audio (clip::source_audio_key, so clips and deletion treat
// it like a link's kept audio) and its job is queued (TranscriptionLiveRecorded),
// which the worker runs with no charge of its own (transcription::State::prepaid).
// Then the pieces are removed. False when there was nothing left to do.
bool finish_transcription(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                          const Meta& meta);

// Housekeeping (any process): ends with reason `stale` every live session
// with no heartbeat for `stale_seconds` (a SIGKILLed server's sessions too),
// ends sessions whose end was requested `end_grace_seconds` ago and that no
// owner ended, and finishes the transcriptions of ended sessions a crash left
// live. Returns the sessions ended.
int end_stale_sessions(const eventstore::EventStore& store, pqxx::connection& conn, int stale_seconds, const Meta& meta,
                       int end_grace_seconds = 10);

// Admin: grants or revokes realtime for a key (key_id) or for the account's
// own console sign-in (key_id nullopt). False when nothing changed.
bool set_realtime_access(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                         std::optional<int64_t> key_id, bool enabled, const Meta& meta);
// The account of a key (api_keys read model); nullopt when unknown.
std::optional<int64_t> account_of_key(pqxx::connection& conn, int64_t key_id);

}  // namespace scribe::commands
