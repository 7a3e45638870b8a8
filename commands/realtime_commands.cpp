#include "commands/realtime_commands.h"

#include "commands/retry_on_conflict.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "domain/clip.h"
#include "domain/events.h"
#include "domain/wallet.h"

namespace scribe::commands {
namespace {

const db::Statement kNextTranscriptionId{"realtime.next_transcription_id", "select nextval('transcription_ids')"};
// Jobs of the account not yet finished (waiting or running): with the live
// sessions, what the plan's max_concurrent_jobs caps at the start.
const db::Statement kActiveJobs{"realtime.active_jobs", "select count(*) from jobs where account_id = $1"};
const db::Statement kInsertLive{"realtime.insert_live",
                                "insert into realtime_live(session_id, account_id, ticket_hash, ticket_expires_at, "
                                "heartbeat_at) values ($1, $2, decode($3, 'hex'), "
                                "now() + make_interval(secs => $4), now())"};
// Single use: the row lock makes a second concurrent redeem wait, then find
// ticket_used_at set and match nothing.
const db::Statement kRedeem{"realtime.redeem",
                            "update realtime_live set ticket_used_at = now() where ticket_hash = decode($1, 'hex') "
                            "and ticket_used_at is null and ticket_expires_at > now() and ended_at is null "
                            "and end_requested_at is null "
                            "returning session_id, samples_persisted, last_turn_order, generation"};
const db::Statement kTicketState{"realtime.ticket_state",
                                 "select ticket_used_at is not null, ticket_expires_at <= now(), "
                                 "ended_at is not null or end_requested_at is not null "
                                 "from realtime_live where ticket_hash = decode($1, 'hex')"};
const db::Statement kSession{"realtime.session",
                             "select s.account_id, s.key_id, s.transcription_id, s.language, s.cap_minutes, "
                             "s.created_at::text, s.status from realtime_sessions s where s.id = $1"};
const db::Statement kLiveOf{
    "realtime.live_of",
    "select account_id, ended_at is not null, end_requested_at is not null, "
    "heartbeat_at < now() - make_interval(secs => $2) from realtime_live where session_id = $1"};
const db::Statement kNewTicket{"realtime.new_ticket",
                               "update realtime_live set ticket_hash = decode($2, 'hex'), ticket_used_at = null, "
                               "ticket_expires_at = now() + make_interval(secs => $3), heartbeat_at = now() "
                               "where session_id = $1 and ended_at is null and end_requested_at is null "
                               "returning ticket_expires_at::text"};
const db::Statement kTicketExpiry{"realtime.ticket_expiry",
                                  "select ticket_expires_at::text from realtime_live where session_id = $1"};
const db::Statement kClaim{"realtime.claim",
                           "update realtime_live set generation = generation + 1, owner = $2, heartbeat_at = now() "
                           "where session_id = $1 and ended_at is null and end_requested_at is null "
                           "returning generation"};
const db::Statement kHeartbeat{"realtime.heartbeat",
                               "update realtime_live set heartbeat_at = now() "
                               "where session_id = $1 and generation = $2 and ended_at is null "
                               "returning end_requested_at is not null"};
const db::Statement kLiveState{"realtime.live_state",
                               "select generation, ended_at is not null from realtime_live where session_id = $1"};
// The piece's row and the count advance together, only for the current
// connection of a session not ended, and only contiguously.
const db::Statement kPersist{"realtime.persist_piece",
                             "with l as (update realtime_live set samples_persisted = samples_persisted + $5 "
                             "where session_id = $1 and generation = $2 and ended_at is null "
                             "and samples_persisted = $4 returning session_id) "
                             "insert into realtime_audio_pieces(session_id, seq, start_sample, samples, generation) "
                             "select session_id, $3, $4, $5, $2 from l returning seq"};
const db::Statement kRecordTurn{"realtime.record_turn",
                                "with l as (update realtime_live set last_turn_order = greatest(last_turn_order, $3) "
                                "where session_id = $1 and generation = $2 and ended_at is null returning session_id) "
                                "insert into realtime_turns(session_id, turn_order, payload) "
                                "select session_id, $3, $4::jsonb from l "
                                "on conflict (session_id, turn_order) do nothing returning turn_order"};
const db::Statement kTurnsAfter{"realtime.turns_after",
                                "select payload::text from realtime_turns where session_id = $1 and turn_order > $2 "
                                "order by turn_order"};
const db::Statement kMarkEndRequested{"realtime.mark_end_requested",
                                      "update realtime_live set end_requested_at = coalesce(end_requested_at, now()) "
                                      "where session_id = $1 and ended_at is null"};
// An append must be the first write of its transaction (050_append_stream.sql),
// so the session's row is read plainly and written after the append; the end
// only stands if no piece was persisted in between (else it is decided again).
const db::Statement kLiveRow{"realtime.live_row",
                             "select account_id, samples_persisted, ended_at is not null from realtime_live "
                             "where session_id = $1"};
const db::Statement kMarkEnded{"realtime.mark_ended",
                               "update realtime_live set ended_at = now(), ticket_hash = null "
                               "where session_id = $1 and samples_persisted = $2 and ended_at is null"};
const db::Statement kPieces{"realtime.pieces",
                            "select seq, start_sample, samples, generation from realtime_audio_pieces "
                            "where session_id = $1 order by seq"};
const db::Statement kStale{"realtime.stale",
                           "select session_id from realtime_live where ended_at is null and "
                           "(heartbeat_at < now() - make_interval(secs => $1) "
                           "or end_requested_at < now() - make_interval(secs => $2)) order by heartbeat_at limit 100"};
// Ended sessions whose transcription a crash left live (between the end and
// finish_transcription).
const db::Statement kUnfinished{
    "realtime.unfinished",
    "select s.id from realtime_sessions s join transcriptions t on t.id = s.transcription_id "
    "where s.status = 'ended' and t.stage = 'live' limit 100"};
// Whether no connection owns a session: none ever claimed it, or its owner's
// heartbeat is older than $2 seconds.
const db::Statement kUnowned{"realtime.unowned",
                             "select ended_at is null and (generation = 0 or heartbeat_at < now() - "
                             "make_interval(secs => $2)) from realtime_live where session_id = $1"};
constexpr int kOwnerSilentSeconds = 10;
const db::Statement kAccountOfKey{"realtime.account_of_key", "select account_id from api_keys where id = $1"};

void stamp(std::vector<eventstore::NewEvent>& events, const Meta& meta) {
  for (auto& e : events) e.metadata = meta.to_json();
}

std::string ticket_hash(const std::string& ticket) { return crypto::sha256_hex(ticket); }

TimePoint parse_time(const pqxx::field& f) { return parse_iso8601(f.as<std::string>()).value_or(now()); }

Error gone(const std::string& reason, const std::string& message) {
  return Error("session_ended", message, {{"reason", reason}}, 410);
}

// The account's stream read once, folded as the account and as its realtime view.
struct AccountView {
  account::State account;
  realtime::Access access;
};
AccountView load_view(pqxx::transaction_base& txn, int64_t account_id) {
  auto events = eventstore::EventStore::read_stream(txn, account::stream_id(account_id));
  return {account::fold(events), realtime::fold(events)};
}

bool enabled_for(const Caller& caller, bool console, const AccountView& v) {
  if (caller.key_id) return v.access.keys.count(*caller.key_id) > 0;
  return console && v.access.account_enabled;
}

}  // namespace

SessionTicket start_session(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                            const Json& body, bool console, int ticket_ttl_seconds) {
  int64_t transcription_id = 0;
  {
    pqxx::nontransaction txn(conn);
    transcription_id = txn.exec_prepared1(kNextTranscriptionId.name)[0].as<int64_t>();
  }
  const std::string session_id = realtime::new_session_id();
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        // Starts of one account queue on its stream, so the concurrency count
        // and the wallet are read after the previous start's commit.
        eventstore::EventStore::lock_stream(txn, account::stream_id(caller.account_id));
        AccountView v = load_view(txn, caller.account_id);
        if (!v.account.exists) throw Error("invalid_api_key", "the API key's account no longer exists");
        const realtime::Request req = realtime::parse_request(body, enabled_for(caller, console, v));
        if (auto max = plans::limits_of(v.account.plan).max_concurrent_jobs) {
          const int64_t active = realtime::open_sessions(v.access) +
                                 txn.exec_prepared1(kActiveJobs.name, caller.account_id)[0].as<int64_t>();
          if (active >= *max)
            throw Error("rate_limited",
                        "the plan allows " + std::to_string(*max) +
                            " concurrent jobs and realtime sessions; this account has " + std::to_string(active),
                        {{"reason", "concurrent_jobs"}, {"max_concurrent_jobs", *max}, {"retry_after", 60}});
        }
        const auto cap = realtime::effective_cap(req.cap_minutes, v.account.plan, v.account.available());
        const TimePoint at = now();
        realtime::Session s;
        s.exists = true;
        s.id = session_id;
        s.account_id = caller.account_id;
        s.key_id = caller.key_id;
        s.transcription_id = transcription_id;
        s.language = req.language;
        s.cap_minutes = cap.minutes;
        s.tier = v.account.plan;
        s.held = cap.hold;
        if (cap.hold > 0) s.hold = realtime::hold_id(session_id);
        std::optional<money::Micros> key_cap;
        if (caller.key_id)
          if (auto k = v.account.keys.find(*caller.key_id); k != v.account.keys.end()) key_cap = k->second.monthly_cap;
        std::vector<eventstore::NewEvent> account_events = {realtime::started(s, at)};
        for (auto& e : wallet::place_hold(v.account,
                                          {realtime::hold_id(session_id),
                                           cap.hold,
                                           caller.key_id,
                                           key_cap,
                                           realtime::kHoldPurpose,
                                           {{"session_id", session_id}, {"transcription_id", transcription_id}}},
                                          at))
          account_events.push_back(std::move(e));
        std::vector<eventstore::NewEvent> tr = {{events::kTranscriptionLiveStarted,
                                                 {{"transcription_id", transcription_id},
                                                  {"account_id", caller.account_id},
                                                  {"key_id", caller.key_id ? Json(*caller.key_id) : Json(nullptr)},
                                                  {"session_id", session_id},
                                                  {"source", realtime::kSource},
                                                  {"language", req.language},
                                                  {"pipeline_code", "standard"},
                                                  {"title", nullptr}}}};
        stamp(account_events, caller.meta);
        stamp(tr, caller.meta);
        store.append(txn, {{account::stream_id(caller.account_id),
                            eventstore::ExpectedVersion::exact(v.account.version), std::move(account_events)},
                           {transcription::stream_id(transcription_id), eventstore::ExpectedVersion::no_stream(),
                            std::move(tr)}});
        const std::string ticket = crypto::random_base64url(32);
        const int ttl = realtime::ticket_ttl_seconds(ticket_ttl_seconds);
        txn.exec_prepared(kInsertLive.name, session_id, caller.account_id, ticket_hash(ticket),
                          static_cast<double>(ttl));
        eventstore::EventStore::commit(txn);
        return SessionTicket{session_id, transcription_id, cap.minutes, ticket, at + std::chrono::seconds(ttl),
                             cap.hold};
      },
      "the account is too busy; retry the request");
}

SessionTicket resume_session(pqxx::connection& conn, const Caller& caller, const std::string& session_id,
                             int stale_seconds, int ticket_ttl_seconds) {
  if (!realtime::is_session_id(session_id)) throw Error::not_found("realtime session");
  pqxx::work txn(conn);
  auto live = txn.exec_prepared(kLiveOf.name, session_id, static_cast<double>(stale_seconds));
  if (live.empty() || live[0][0].as<int64_t>() != caller.account_id) throw Error::not_found("realtime session");
  if (live[0][1].as<bool>() || live[0][2].as<bool>())
    throw gone("session_ended", "the realtime session has ended; start a new one");
  if (live[0][3].as<bool>()) throw gone("session_stale", "the realtime session went stale; start a new one");
  auto s = txn.exec_prepared1(kSession.name, session_id);
  const std::string ticket = crypto::random_base64url(32);
  const int ttl = realtime::ticket_ttl_seconds(ticket_ttl_seconds);
  auto r = txn.exec_prepared(kNewTicket.name, session_id, ticket_hash(ticket), static_cast<double>(ttl));
  if (r.empty()) throw gone("session_ended", "the realtime session has ended; start a new one");
  txn.commit();
  return SessionTicket{session_id, s[2].as<int64_t>(), s[4].as<int>(), ticket, parse_time(r[0][0]), 0};
}

Redeemed redeem_ticket(pqxx::connection& conn, const std::string& ticket) {
  Redeemed out;
  if (ticket.empty() || ticket.size() > 128) {
    out.refusal = realtime::TicketRefusal::Invalid;
    return out;
  }
  pqxx::work txn(conn);
  const std::string hash = ticket_hash(ticket);
  auto r = txn.exec_prepared(kRedeem.name, hash);
  if (r.empty()) {
    auto st = txn.exec_prepared(kTicketState.name, hash);
    txn.commit();
    if (st.empty()) out.refusal = realtime::TicketRefusal::Invalid;
    else if (st[0][2].as<bool>()) out.refusal = realtime::TicketRefusal::Ended;
    else if (st[0][0].as<bool>()) out.refusal = realtime::TicketRefusal::Used;
    else out.refusal = realtime::TicketRefusal::Expired;
    return out;
  }
  LiveSession l;
  l.session_id = r[0][0].as<std::string>();
  l.samples_persisted = r[0][1].as<int64_t>();
  l.last_turn_order = r[0][2].as<int>();
  l.resumed = r[0][3].as<int>() > 0;
  auto s = txn.exec_prepared1(kSession.name, l.session_id);
  l.account_id = s[0].as<int64_t>();
  if (!s[1].is_null()) l.key_id = s[1].as<int64_t>();
  l.transcription_id = s[2].as<int64_t>();
  l.language = s[3].as<std::string>();
  l.cap_minutes = s[4].as<int>();
  l.created_at = parse_time(s[5]);
  txn.commit();
  out.session = l;
  return out;
}

std::optional<int> claim_connection(pqxx::connection& conn, const std::string& session_id, const std::string& owner) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kClaim.name, session_id, owner);
  txn.commit();
  if (r.empty()) return std::nullopt;
  return r[0][0].as<int>();
}

Heartbeat heartbeat(pqxx::connection& conn, const std::string& session_id, int generation) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kHeartbeat.name, session_id, generation);
  if (!r.empty()) {
    txn.commit();
    return r[0][0].as<bool>() ? Heartbeat::EndRequested : Heartbeat::Live;
  }
  auto st = txn.exec_prepared(kLiveState.name, session_id);
  txn.commit();
  if (st.empty() || st[0][1].as<bool>()) return Heartbeat::Ended;
  return Heartbeat::Superseded;
}

bool persist_piece(pqxx::connection& conn, const std::string& session_id, int generation, int64_t seq,
                   int64_t start_sample, const std::string& pcm) {
  if (pcm.empty() || pcm.size() % realtime::kBytesPerSample != 0)
    throw Error("internal_error", "a piece of audio must be whole 16-bit samples");
  const int64_t samples = static_cast<int64_t>(pcm.size()) / realtime::kBytesPerSample;
  // The generation is checked before the object is written, so a superseded
  // connection stops writing; its key carries the generation, so one that
  // raced past the check never overwrites its successor's piece. Then the
  // object before its row: a row never names audio that is not stored. A
  // piece written and then refused is removed with the session's prefix.
  {
    pqxx::read_transaction txn(conn);
    auto st = txn.exec_prepared(kLiveState.name, session_id);
    if (st.empty() || st[0][1].as<bool>() || st[0][0].as<int>() != generation) return false;
  }
  object_store().put(realtime::piece_key(session_id, seq, generation), pcm);
  pqxx::work txn(conn);
  try {
    auto r = txn.exec_prepared(kPersist.name, session_id, generation, seq, start_sample, samples);
    txn.commit();
    return !r.empty();
  } catch (const pqxx::unique_violation&) {
    return false;  // that seq is already persisted
  }
}

bool record_turn(pqxx::connection& conn, const std::string& session_id, int generation, int turn_order,
                 const Json& payload) {
  pqxx::work txn(conn);
  auto r = txn.exec_prepared(kRecordTurn.name, session_id, generation, turn_order, payload.dump());
  txn.commit();
  return !r.empty();
}

std::vector<Json> turns_after(pqxx::connection& conn, const std::string& session_id, int after_turn_order) {
  pqxx::read_transaction txn(conn);
  std::vector<Json> out;
  for (const auto& row : txn.exec_prepared(kTurnsAfter.name, session_id, after_turn_order))
    out.push_back(Json::parse(row[0].as<std::string>()));
  return out;
}

std::string request_end(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                        std::optional<int64_t> account_id, const std::string& reason, const Meta& meta) {
  if (!realtime::is_session_id(session_id)) throw Error::not_found("realtime session");
  const std::string status = retry_on_conflict(
      [&]() -> std::string {
        pqxx::work txn(conn);
        auto live = txn.exec_prepared(kLiveRow.name, session_id);
        if (live.empty() || (account_id && live[0][0].as<int64_t>() != *account_id))
          throw Error::not_found("realtime session");
        const int64_t owner_account = live[0][0].as<int64_t>();
        eventstore::EventStore::lock_stream(txn, account::stream_id(owner_account));
        AccountView v = load_view(txn, owner_account);
        auto it = v.access.sessions.find(session_id);
        if (it == v.access.sessions.end()) throw Error::not_found("realtime session");
        if (it->second.status == realtime::kEnded) return realtime::kEnded;
        if (auto e = realtime::end_requested(it->second, reason)) {
          std::vector<eventstore::NewEvent> events = {*e};
          stamp(events, meta);
          store.append(txn, {{account::stream_id(owner_account), eventstore::ExpectedVersion::exact(v.account.version),
                              std::move(events)}});
        }
        txn.exec_prepared(kMarkEndRequested.name, session_id);
        eventstore::EventStore::commit(txn);
        return realtime::kEnding;
      },
      "the realtime session is busy; retry");
  // No connection will end it: never connected, or its owner stopped beating
  // (a live owner beats every few seconds). It is ended and settled now
  // rather than by housekeeping; the answer stays "ending" (the spec's 202).
  if (status == realtime::kEnding) {
    bool unowned = false;
    {
      pqxx::read_transaction txn(conn);
      auto r = txn.exec_prepared(kUnowned.name, session_id, static_cast<double>(kOwnerSilentSeconds));
      unowned = !r.empty() && r[0][0].as<bool>();
    }
    if (unowned) end_session(store, conn, session_id, reason, meta);
  }
  return status;
}

SessionEnd end_session(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                       const std::string& reason, const Meta& meta) {
  SessionEnd out = retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        // Two ends queue on the account's lock; the second finds it ended.
        auto live = txn.exec_prepared(kLiveRow.name, session_id);
        if (live.empty()) throw Error::not_found("realtime session");
        const int64_t account_id = live[0][0].as<int64_t>();
        const int64_t samples = live[0][1].as<int64_t>();
        eventstore::EventStore::lock_stream(txn, account::stream_id(account_id));
        AccountView v = load_view(txn, account_id);
        auto it = v.access.sessions.find(session_id);
        if (it == v.access.sessions.end()) throw Error::not_found("realtime session");
        const realtime::Session& s = it->second;
        SessionEnd r;
        if (s.status == realtime::kEnded) {
          r.samples = s.audio_samples;
          r.billed_seconds = realtime::billed_seconds(s.audio_samples);
          r.charge = s.charge;
          r.reason = s.end_reason.value_or("");
          return r;  // ended before: nothing appended, nothing settled again
        }
        const TimePoint at = now();
        money::Micros charge = realtime::charge(samples, s.tier, s.held);
        std::vector<eventstore::NewEvent> events;
        std::vector<eventstore::NewEvent> money;
        if (s.hold)
          money = charge > 0 ? wallet::settle_hold(v.account, *s.hold, charge, at)
                             : wallet::release_hold(v.account, *s.hold);
        if (money.empty() || money.front().type != events::kWalletHoldSettled) charge = 0;
        auto ended = realtime::ended(s, reason, samples, charge, at);
        events.push_back(*ended);
        for (auto& e : money) events.push_back(std::move(e));
        stamp(events, meta);
        store.append(txn, {{account::stream_id(account_id), eventstore::ExpectedVersion::exact(v.account.version),
                            std::move(events)}});
        // A piece persisted since the count was read: decide again on the new count.
        if (txn.exec_prepared(kMarkEnded.name, session_id, samples).affected_rows() != 1)
          throw eventstore::ConcurrencyError("a piece was persisted while the session ended");
        eventstore::EventStore::commit(txn);
        r.ended_now = true;
        r.samples = samples;
        r.billed_seconds = realtime::billed_seconds(samples);
        r.charge = charge;
        r.reason = ended->data.at("reason").get<std::string>();
        return r;
      },
      "the realtime session is busy; retry");
  finish_transcription(store, conn, session_id, meta);
  return out;
}

bool finish_transcription(const eventstore::EventStore& store, pqxx::connection& conn, const std::string& session_id,
                          const Meta& meta) {
  int64_t transcription_id = 0, account_id = 0, samples = 0;
  money::Micros charge = 0;
  {
    pqxx::read_transaction txn(conn);
    auto s = txn.exec_prepared(kSession.name, session_id);
    if (s.empty() || s[0][6].as<std::string>() != realtime::kEnded) return false;
    account_id = s[0][0].as<int64_t>();
    transcription_id = s[0][2].as<int64_t>();
    auto v = load_view(txn, account_id);
    const auto& sess = v.access.sessions.at(session_id);
    samples = sess.audio_samples;
    charge = sess.charge;
  }
  const std::string sid = transcription::stream_id(transcription_id);
  transcription::State tr;
  {
    pqxx::read_transaction txn(conn);
    tr = transcription::fold(eventstore::EventStore::read_stream(txn, sid));
  }
  if (!tr.exists || tr.deleted) {
    // Deleted while live: its audio is not kept either.
    object_store().remove_prefix("realtime/" + session_id + "/");
    return false;
  }
  if (tr.stage != realtime::kLiveStage) return false;
  eventstore::NewEvent e;
  if (samples == 0) {
    e = {events::kTranscriptionCancelled,
         {{"transcription_id", transcription_id}, {"account_id", account_id}, {"reason", "no_audio"}}};
  } else {
    // The pieces as persisted (contiguous, the billed ones), joined into one
    // recording kept as the transcription's audio.
    std::string wav = realtime::wav_header(samples);
    wav.reserve(wav.size() + static_cast<std::size_t>(samples) * realtime::kBytesPerSample);
    {
      pqxx::read_transaction txn(conn);
      for (const auto& row : txn.exec_prepared(kPieces.name, session_id)) {
        auto pcm = object_store().get(realtime::piece_key(session_id, row[0].as<int64_t>(), row[3].as<int>()));
        if (!pcm) {
          // Another process finished it first and removed the pieces.
          if (transcription::fold(eventstore::EventStore::read_stream(txn, sid)).stage != realtime::kLiveStage)
            return false;
          throw Error("internal_error", "a persisted piece of realtime audio is missing");
        }
        wav.append(pcm->data(), std::min<std::size_t>(pcm->size(), static_cast<std::size_t>(row[2].as<int64_t>()) *
                                                                       realtime::kBytesPerSample));
      }
    }
    object_store().put(clip::source_audio_key(transcription_id), wav);
    e = {events::kTranscriptionLiveRecorded,
         {{"transcription_id", transcription_id},
          {"account_id", account_id},
          {"session_id", session_id},
          {"attempt", 1},
          {"duration_seconds", static_cast<double>(samples) / realtime::kSampleRate},
          {"billed_seconds", realtime::billed_seconds(samples)},
          {"charge_micros", charge}}};
  }
  e.metadata = meta.to_json();
  try {
    store.append_and_commit(conn, {{sid, eventstore::ExpectedVersion::exact(tr.version), {e}}});
  } catch (const eventstore::ConcurrencyError&) {
    return false;  // another process finished it (or it was deleted) meanwhile
  }
  object_store().remove_prefix("realtime/" + session_id + "/");
  return true;
}

int end_stale_sessions(const eventstore::EventStore& store, pqxx::connection& conn, int stale_seconds, const Meta& meta,
                       int end_grace_seconds) {
  std::vector<std::string> stale, unfinished;
  {
    pqxx::read_transaction txn(conn);
    for (const auto& row :
         txn.exec_prepared(kStale.name, static_cast<double>(stale_seconds), static_cast<double>(end_grace_seconds)))
      stale.push_back(row[0].as<std::string>());
    for (const auto& row : txn.exec_prepared(kUnfinished.name)) unfinished.push_back(row[0].as<std::string>());
  }
  int ended = 0;
  for (const auto& id : stale)
    if (end_session(store, conn, id, realtime::kReasonStale, meta).ended_now) ++ended;
  for (const auto& id : unfinished) finish_transcription(store, conn, id, meta);
  return ended;
}

bool set_realtime_access(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                         std::optional<int64_t> key_id, bool enabled, const Meta& meta) {
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        AccountView v = load_view(txn, account_id);
        if (!v.account.exists) throw Error::not_found("account");
        if (key_id) {
          auto k = v.account.keys.find(*key_id);
          if (k == v.account.keys.end()) throw Error::not_found("API key");
          if (enabled && k->second.revoked) throw Error::invalid("key_id", "the key is revoked");
        }
        auto events = realtime::set_access(v.access, account_id, key_id, enabled);
        if (events.empty()) return false;
        stamp(events, meta);
        store.append(txn, {{account::stream_id(account_id), eventstore::ExpectedVersion::exact(v.account.version),
                            std::move(events)}});
        eventstore::EventStore::commit(txn);
        return true;
      },
      "the account is busy; retry");
}

std::optional<int64_t> account_of_key(pqxx::connection& conn, int64_t key_id) {
  pqxx::read_transaction txn(conn);
  auto r = txn.exec_prepared(kAccountOfKey.name, key_id);
  if (r.empty()) return std::nullopt;
  return r[0][0].as<int64_t>();
}

}  // namespace scribe::commands
