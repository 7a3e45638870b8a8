#include "commands/transcription_commands.h"

#include "commands/ask_commands.h"
#include "commands/clip_commands.h"
#include "commands/revision_commands.h"
#include "commands/retry_on_conflict.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "domain/events.h"
#include "domain/fair_use.h"
#include "domain/measurement.h"
#include "domain/pricing.h"
#include "domain/wallet.h"
#include "eventstore/event_store.h"
#include "domain/transcript_artifact.h"

namespace scribe::commands {
namespace {

const db::Statement kUploadOf{"commands.upload_of",
                              "select upload_id from transcriptions where id = $1 and source = 'upload'"};
const db::Statement kUploadUsers{"commands.upload_users", "select count(*) from transcriptions where upload_id = $1"};
const db::Statement kNextId{"commands.next_transcription_id", "select nextval('transcription_ids')"};
// Waiting jobs: those no worker holds a live lease on (workers/job_queue.cpp).
const db::Statement kQueued{"commands.queued_jobs",
                            "select count(*) from jobs j where j.account_id = $1 and not exists "
                            "(select 1 from job_leases l where l.transcription_id = j.transcription_id "
                            "and l.attempt = j.attempt and l.expires_at >= now())"};

constexpr auto kQuoteLifetime = std::chrono::hours(1);

int64_t next_transcription_id(pqxx::connection& conn) {
  pqxx::nontransaction txn(conn);
  return txn.exec_prepared1(kNextId.name)[0].as<int64_t>();
}

void stamp(std::vector<eventstore::NewEvent>& events, const Meta& meta) {
  for (auto& e : events) e.metadata = meta.to_json();
}

void check_backlog(pqxx::transaction_base& txn, const account::State& acc) {
  auto limits = plans::limits_of(acc.plan);
  if (!limits.max_queued) return;
  int64_t queued = txn.exec_prepared1(kQueued.name, acc.id)[0].as<int64_t>();
  if (queued >= *limits.max_queued)
    throw Error("queue_full", "this account already has " + std::to_string(queued) + " jobs waiting",
                {{"queued", queued}, {"max_queued", *limits.max_queued}, {"retry_after", 60}});
}

// Loads the account, prices the work, and decides the account events of one
// accepted attempt (fair use, hold). Throws the spec's errors.
struct Accepted {
  account::State account;
  pricing::Quote price;
  std::vector<eventstore::NewEvent> account_events;
};

Accepted accept(pqxx::work& txn, const Caller& caller, int64_t transcription_id, int attempt, double duration_seconds,
                std::optional<money::Micros> max_charge, bool check_length) {
  Accepted a;
  // Creates and retries of one account queue on its stream rather than
  // racing to append and starting over (bench/README.md, lifecycle).
  eventstore::EventStore::lock_stream(txn, account::stream_id(caller.account_id));
  a.account = load_account(txn, caller.account_id);
  if (!a.account.exists) throw Error("invalid_api_key", "the API key's account no longer exists");
  if (check_length) transcription::check_plan_length(duration_seconds, a.account.plan);
  a.price = pricing::quote(duration_seconds, a.account.plan);
  transcription::check_max_charge(max_charge, a.price.charge);
  TimePoint at = now();
  fair_use::check(a.account, a.price.billed_seconds, at);
  check_backlog(txn, a.account);
  std::optional<money::Micros> cap;
  if (caller.key_id)
    if (auto k = a.account.keys.find(*caller.key_id); k != a.account.keys.end()) cap = k->second.monthly_cap;
  const std::string hold = transcription::hold_id(transcription_id, attempt);
  a.account_events.push_back({events::kTranscriptionAccepted,
                              {{"account_id", a.account.id},
                               {"transcription_id", transcription_id},
                               {"attempt", attempt},
                               {"billed_seconds", a.price.billed_seconds},
                               {"accepted_at", to_iso8601(at)}}});
  auto holds = wallet::place_hold(
      a.account, {hold, a.price.charge, caller.key_id, cap, "transcription", {{"transcription_id", transcription_id}}},
      at);
  for (auto& e : holds) a.account_events.push_back(std::move(e));
  return a;
}

Priced priced(int64_t id, double duration, const pricing::Quote& q, plans::Tier tier) {
  return Priced{id, duration, q.billed_seconds, q.billed_minutes, q.charge, tier, {}};
}

}  // namespace

Priced quote(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
             const transcription::Request& req) {
  transcription::check_request(req);
  if (!req.duration_seconds) throw Error("internal_error", "quote without a duration");
  account::State acc;
  {
    pqxx::read_transaction txn(conn);
    acc = load_account(txn, caller.account_id);
  }
  if (!acc.exists) throw Error("invalid_api_key", "the API key's account no longer exists");
  transcription::check_plan_length(*req.duration_seconds, acc.plan);
  auto q = pricing::quote(*req.duration_seconds, acc.plan);
  int64_t id = next_transcription_id(conn);
  TimePoint expires = now() + kQuoteLifetime;
  std::vector<eventstore::NewEvent> events = {
      transcription::quoted(id, caller.account_id, caller.key_id, req, q.billed_seconds, q.charge, expires)};
  stamp(events, caller.meta);
  store.append_and_commit(
      conn, {{transcription::stream_id(id), eventstore::ExpectedVersion::no_stream(), std::move(events)}});
  Priced p = priced(id, *req.duration_seconds, q, acc.plan);
  p.expires_at = expires;
  return p;
}

Priced create(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
              const transcription::Request& req) {
  transcription::check_request(req);
  if (!req.duration_seconds) throw Error("internal_error", "create without a duration");
  const int64_t id = next_transcription_id(conn);
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        Accepted a = accept(txn, caller, id, 1, *req.duration_seconds, req.max_charge, true);
        std::vector<eventstore::NewEvent> tr = {transcription::created(id, caller.account_id, caller.key_id, req,
                                                                       a.price.billed_seconds, a.price.charge,
                                                                       transcription::hold_id(id, 1))};
        stamp(tr, caller.meta);
        stamp(a.account_events, caller.meta);
        store.append(txn, {{account::stream_id(caller.account_id),
                            eventstore::ExpectedVersion::exact(a.account.version), std::move(a.account_events)},
                           {transcription::stream_id(id), eventstore::ExpectedVersion::no_stream(), std::move(tr)}});
        eventstore::EventStore::commit(txn);
        return priced(id, *req.duration_seconds, a.price, a.account.plan);
      },
      "the account is too busy; retry the request");
}

Priced retry(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
             int64_t transcription_id, std::optional<money::Micros> max_charge) {
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        // The account's lock first, then the transcription: concurrent retries of
        // one transcription queue here, and each after the first reads it already
        // processing and gets the answer a later retry would (not a hold clash).
        eventstore::EventStore::lock_stream(txn, account::stream_id(caller.account_id));
        auto tr =
            transcription::fold(eventstore::EventStore::read_stream(txn, transcription::stream_id(transcription_id)));
        if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
        if (tr.status != transcription::kFailed)
          throw Error("invalid_request", "only a failed transcription can be retried; this one is " + tr.status,
                      {{"status", tr.status}});
        const int next = tr.attempt + 1;
        // The plan's length cap was checked when the transcription was accepted.
        Accepted a = accept(txn, caller, transcription_id, next, tr.duration_seconds, max_charge, false);
        std::vector<eventstore::NewEvent> tev = {transcription::retried(
            tr, a.price.billed_seconds, a.price.charge, transcription::hold_id(transcription_id, next), max_charge)};
        stamp(tev, caller.meta);
        stamp(a.account_events, caller.meta);
        store.append(txn, {{account::stream_id(caller.account_id),
                            eventstore::ExpectedVersion::exact(a.account.version), std::move(a.account_events)},
                           {transcription::stream_id(transcription_id), eventstore::ExpectedVersion::exact(tr.version),
                            std::move(tev)}});
        eventstore::EventStore::commit(txn);
        return priced(transcription_id, tr.duration_seconds, a.price, a.account.plan);
      },
      "the account is too busy; retry the request");
}

void remove(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
            int64_t transcription_id) {
  // Billing facts survive redaction so the wallet stays replayable; the
  // customer's content (links, names, titles, references, results) does not.
  static const char* kept[] = {"transcription_id", "account_id", "key_id",    "attempt",          "billed_seconds",
                               "charge_micros",    "hold_id",    "source",    "duration_seconds", "language",
                               "pipeline_code",    "stage",      "expires_at"};
  std::optional<std::string> upload_id;
  {
    pqxx::read_transaction txn(conn);
    auto r = txn.exec_prepared(kUploadOf.name, transcription_id);
    if (!r.empty() && !r[0][0].is_null()) upload_id = r[0][0].as<std::string>();
  }
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        const std::string sid = transcription::stream_id(transcription_id);
        // The account's lock first, as clip creation and retries take it
        // (the append would take it anyway, and taking it after the
        // transcription's could deadlock with a clip being created).
        eventstore::EventStore::lock_stream(txn, account::stream_id(caller.account_id));
        // Taken before reading: an ask recording an entry about this
        // transcription holds it too (ask_commands.h), and so does a clip
        // being created, so the entries and clips read below are all there
        // will be.
        eventstore::EventStore::lock_stream(txn, sid);
        auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, sid));
        if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
        auto acc = load_account(txn, caller.account_id);
        const auto asked = answers_about(txn, caller.account_id, transcription_id);
        std::vector<eventstore::StreamAppend> appends;
        std::vector<eventstore::NewEvent> tev = {transcription::deleted(tr)};
        stamp(tev, caller.meta);
        appends.push_back({sid, eventstore::ExpectedVersion::exact(tr.version), std::move(tev)});
        std::vector<eventstore::NewEvent> release;
        if (transcription::is_active(tr.status) && tr.hold) release = wallet::release_hold(acc, *tr.hold);
        stamp(release, caller.meta);
        // Its clips still queued will never render: they fail and their holds go too.
        const auto clip_streams = abandon_clips(txn, acc, transcription_id, appends, release, caller.meta);
        if (!release.empty())
          appends.push_back({account::stream_id(caller.account_id), eventstore::ExpectedVersion::exact(acc.version),
                             std::move(release)});
        store.append(txn, appends);
        eventstore::EventStore::redact_stream(txn, sid, [](const std::string&, const Json& data) {
          Json out = Json::object();
          for (const char* k : kept)
            if (data.contains(k)) out[k] = data.at(k);
          out["redacted"] = true;
          return out;
        });
        for (const auto& cs : clip_streams)
          eventstore::EventStore::redact_stream(txn, cs, [](const std::string&, const Json& data) {
            Json out = Json::object();
            for (const char* k : {"clip_id", "account_id", "transcription_id", "key_id", "charge_micros", "hold_id"})
              if (data.contains(k)) out[k] = data.at(k);
            out["redacted"] = true;
            return out;
          });
        // Questions asked about it quote it: their text goes too.
        redact_answers(txn, asked);
        // Its revisions hold transcript text: it goes (the projection drops the rows).
        redact_revisions(txn, transcription_id);
        eventstore::EventStore::commit(txn);
        // Stored objects go after the commit: a crash in between leaves files
        // nothing refers to, never a transcript that refers to nothing. The
        // uploaded media goes too, unless another transcription still uses it.
        object_store().remove_prefix(transcript::transcription_prefix(transcription_id));
        if (upload_id) {
          pqxx::read_transaction check(conn);
          if (check.exec_prepared1(kUploadUsers.name, *upload_id)[0].as<int64_t>() == 0)
            object_store().remove_prefix("uploads/" + *upload_id);
        }
        return;
      },
      "the transcription is busy; retry the request");
}

namespace {

// The transcription and its account, read in one snapshot, while `attempt`
// is its current attempt and still processing; nullopt once it is not
// (retried, deleted or finished), so a worker that lost its job decides nothing.
std::optional<std::pair<transcription::State, account::State>> current_attempt(pqxx::connection& conn,
                                                                               int64_t transcription_id, int attempt) {
  pqxx::read_transaction txn(conn);
  auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, transcription::stream_id(transcription_id)));
  if (!tr.exists || tr.deleted || tr.attempt != attempt || tr.status != transcription::kProcessing) return std::nullopt;
  auto acc = load_account(txn, tr.account_id);
  return std::make_pair(std::move(tr), std::move(acc));
}

// Appends the outcome of attempt `attempt` and settles its hold.
bool finish_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id, int attempt,
                    eventstore::NewEvent outcome, std::optional<double> measured_duration, const Meta& meta) {
  outcome.metadata = meta.to_json();
  return retry_on_conflict(
      [&] {
        // Read, decide, then append at the versions read (group commit; see
        // execute_on_account): a settlement decided on a stale account fails its
        // version check and is decided again, so a hold is settled exactly once.
        const std::string sid = transcription::stream_id(transcription_id);
        auto current = current_attempt(conn, transcription_id, attempt);
        if (!current) return false;
        auto& [tr, acc] = *current;
        // A completed attempt is charged its measured length; a failed one its
        // hold, or its measured length once the worker measured it (a recording
        // declared longer than it is is never charged for the difference).
        money::Micros charge = tr.last_charge;
        if (!measured_duration) measured_duration = tr.measured_seconds;
        if (measured_duration) charge = pricing::quote(*measured_duration, acc.plan).charge;
        std::vector<eventstore::NewEvent> settle;
        if (tr.hold) settle = wallet::settle_hold(acc, *tr.hold, charge, now());
        for (auto& e : settle) e.metadata = meta.to_json();
        // The outcome records what was really charged, so reads show the charge
        // rather than the hold.
        eventstore::NewEvent recorded = outcome;
        // A realtime session's transcription was paid by the session's hold
        // (tr.prepaid): it shows what the session charged.
        recorded.data["charge_micros"] = !settle.empty() ? settle.front().data.at("charged_micros").get<int64_t>()
                                         : tr.prepaid    ? tr.last_charge
                                                         : 0;
        if (measured_duration) recorded.data["billed_seconds"] = pricing::billed_seconds(*measured_duration);
        std::vector<eventstore::StreamAppend> appends = {
            {sid, eventstore::ExpectedVersion::exact(tr.version), {recorded}}};
        if (!settle.empty())
          appends.push_back(
              {account::stream_id(tr.account_id), eventstore::ExpectedVersion::exact(acc.version), settle});
        store.append_and_commit(conn, std::move(appends));
        return true;
      },
      "the transcription is busy; retry");
}

}  // namespace

Measurement measure_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id,
                            int attempt, double measured_seconds, const Meta& meta) {
  return retry_on_conflict(
      [&]() -> Measurement {
        const std::string sid = transcription::stream_id(transcription_id);
        auto current = current_attempt(conn, transcription_id, attempt);
        if (!current) return Measurement::Gone;
        auto& [tr, acc] = *current;
        auto decision = measurement::decide(tr, acc, measured_seconds, now());
        if (decision.outcome == measurement::Outcome::AlreadyMeasured) return Measurement::Go;
        stamp(decision.transcription_events, meta);
        stamp(decision.account_events, meta);
        std::vector<eventstore::StreamAppend> appends = {
            {sid, eventstore::ExpectedVersion::exact(tr.version), std::move(decision.transcription_events)}};
        // The account's version is checked even when only the fair-use record
        // changes, so the decision is never made on a stale wallet.
        if (!decision.account_events.empty())
          appends.push_back({account::stream_id(tr.account_id), eventstore::ExpectedVersion::exact(acc.version),
                             std::move(decision.account_events)});
        store.append_and_commit(conn, std::move(appends));
        return decision.outcome == measurement::Outcome::Refused ? Measurement::Refused : Measurement::Go;
      },
      "the transcription is busy; retry");
}

bool complete_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id,
                      int attempt, const Completion& done, const Meta& meta) {
  // The container's title, or the file name or link title it fell back to.
  const auto title = transcription::clean_title(done.title);
  Json d = {{"transcription_id", transcription_id},
            {"attempt", attempt},
            {"duration_seconds", done.duration_seconds},
            {"detected_language", done.detected_language ? Json(*done.detected_language) : Json(nullptr)},
            {"title", title ? Json(*title) : Json(nullptr)},
            {"artifacts", done.artifacts}};
  return finish_attempt(store, conn, transcription_id, attempt, {events::kTranscriptionCompleted, d},
                        done.duration_seconds, meta);
}

bool fail_attempt(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id, int attempt,
                  const std::string& code, const std::string& message, const Meta& meta) {
  Json d = {
      {"transcription_id", transcription_id}, {"attempt", attempt}, {"error", {{"code", code}, {"message", message}}}};
  return finish_attempt(store, conn, transcription_id, attempt, {events::kTranscriptionFailed, d}, std::nullopt, meta);
}

bool record_stage(const eventstore::EventStore& store, pqxx::connection& conn, int64_t transcription_id, int attempt,
                  const std::string& stage, const Meta& meta) {
  return retry_on_conflict(
      [&]() -> bool {
        const std::string sid = transcription::stream_id(transcription_id);
        transcription::State tr;
        {
          pqxx::read_transaction txn(conn);
          tr = transcription::fold(eventstore::EventStore::read_stream(txn, sid));
        }
        auto event = transcription::stage_changed(tr, attempt, stage);
        if (!event) return false;
        if (tr.stage == stage) return true;
        event->metadata = meta.to_json();
        store.append_and_commit(conn, {{sid, eventstore::ExpectedVersion::exact(tr.version), {*event}}});
        return true;
      },
      "the transcription is busy; retry");
}

std::string callback_secret(pqxx::connection& conn, int64_t transcription_id) {
  return "whsec_" +
         crypto::hmac_sha256_hex(secrets::get(conn, "callback"), "transcription:" + std::to_string(transcription_id));
}

}  // namespace scribe::commands
