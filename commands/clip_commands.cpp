#include "commands/clip_commands.h"

#include <functional>

#include "commands/retry_on_conflict.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "domain/events.h"
#include "domain/transcription.h"
#include "domain/wallet.h"

namespace scribe::commands {
namespace {

const db::Statement kSubject{"clips.subject",
                             "select status, coalesce(duration_seconds, 0), source, upload_id, url "
                             "from transcriptions where id = $1 and account_id = $2"};
// A word belongs to a clip when its midpoint is in the range (domain/clip_captions.h).
const db::Statement kWordsInRange{"clips.words_in_range",
                                  "select count(*) from words where transcription_id = $1 "
                                  "and start_ms + end_ms >= $2::bigint and start_ms + end_ms <= $3::bigint"};
// $2 is canonical (clip::canonical_uuid); lower() also finds a nonce kept in
// another case by a clip requested before nonces were kept canonical.
const db::Statement kByNonce{"clips.by_nonce",
                             "select id from clips where account_id = $1 and client_nonce is not null "
                             "and lower(client_nonce) = $2 order by id limit 1"};
const db::Statement kVideoStarted{"clips.video_started",
                                  "select exists (select 1 from clips where transcription_id = $1 and video_download "
                                  "and status <> 'failed')"};
const db::Statement kNextId{"clips.next_id", "select nextval('clip_ids')"};
const db::Statement kAllOf{"clips.all_of", "select id from clips where transcription_id = $1"};
const db::Statement kQueuedOf{"clips.queued_of",
                              "select id from clips where transcription_id = $1 and status = 'queued' order by id"};

// Whether a clip of the transcription already started (or finished) a
// download of its source video, so a new one is not counted again.
bool video_download_started(pqxx::transaction_base& txn, int64_t transcription_id) {
  return txn.exec_prepared1(kVideoStarted.name, transcription_id)[0].as<bool>();
}

void stamp(std::vector<eventstore::NewEvent>& events, const Meta& meta) {
  for (auto& e : events) e.metadata = meta.to_json();
}

// Decides a new clip on the account (locked by the caller) and the
// transcription stream: returns the account's events, or throws the spec's
// error. `existing`: the clip an earlier request with this nonce created.
struct Decision {
  account::State account;
  money::Micros charge = 0;
  std::vector<eventstore::NewEvent> account_events;
  std::optional<int64_t> existing;
  bool video_download = false;
};

// `link_video`: the render needs the source video of a link; whether that
// starts a new download is decided here, under the account's lock, so two
// first video clips of one link count one download between them.
Decision decide(pqxx::work& txn, const Caller& caller, const clip::Request& req, bool link_video, int64_t clip_id) {
  Decision d;
  clip::check_request(req);
  const std::string tsid = transcription::stream_id(req.transcription_id);
  eventstore::EventStore::lock_stream(txn, tsid);
  auto tr = transcription::fold(eventstore::EventStore::read_stream(txn, tsid));
  if (!tr.exists || tr.deleted || tr.account_id != caller.account_id) throw Error::not_found("transcription");
  transcription::require_completed(tr.status);
  if (req.client_nonce) {
    // check_request() refused a nonce that is not a UUID.
    const std::string nonce = clip::canonical_uuid(*req.client_nonce).value_or(*req.client_nonce);
    auto r = txn.exec_prepared(kByNonce.name, caller.account_id, nonce);
    if (!r.empty()) {
      d.existing = r[0][0].as<int64_t>();
      return d;
    }
  }
  clip::check_range(req, tr.duration_seconds);
  const auto lo = static_cast<int64_t>(std::llround(req.start_seconds * 2000.0));
  const auto hi = static_cast<int64_t>(std::llround(req.end_seconds * 2000.0));
  if (txn.exec_prepared1(kWordsInRange.name, req.transcription_id, lo, hi)[0].as<int64_t>() == 0)
    throw Error("invalid_request", "no transcribed word lies in this range",
                {{"field", "start_seconds"}, {"reason", "no_words_in_range"}});
  d.charge = clip::charge(req.clip_seconds());
  transcription::check_max_charge(req.max_charge, d.charge);
  d.account = load_account(txn, caller.account_id);
  if (!d.account.exists) throw Error("invalid_api_key", "the API key's account no longer exists");
  const TimePoint at = now();
  const bool video = link_video && !video_download_started(txn, req.transcription_id) &&
                     !object_store().exists(clip::source_video_key(req.transcription_id));
  d.video_download = video;
  clip::check_admission(d.account, video, at);
  std::optional<money::Micros> cap;
  if (caller.key_id)
    if (auto k = d.account.keys.find(*caller.key_id); k != d.account.keys.end()) cap = k->second.monthly_cap;
  d.account_events.push_back(clip::accepted(caller.account_id, clip_id, req.transcription_id, video, at));
  for (auto& e : wallet::place_hold(d.account,
                                    {clip::hold_id(clip_id),
                                     d.charge,
                                     caller.key_id,
                                     cap,
                                     "clip",
                                     {{"clip_id", clip_id}, {"transcription_id", req.transcription_id}}},
                                    at))
    d.account_events.push_back(std::move(e));
  return d;
}

}  // namespace

ClipSubject clip_subject(pqxx::transaction_base& txn, int64_t account_id, int64_t transcription_id) {
  auto r = txn.exec_prepared(kSubject.name, transcription_id, account_id);
  if (r.empty()) throw Error::not_found("transcription");
  transcription::require_completed(r[0][0].as<std::string>());
  ClipSubject s;
  s.duration_seconds = r[0][1].as<double>();
  s.source = r[0][2].as<std::string>();
  if (!r[0][3].is_null()) s.upload_id = r[0][3].as<std::string>();
  if (!r[0][4].is_null()) s.url = r[0][4].as<std::string>();
  return s;
}

ClipCreated create_clip(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                        const clip::Request& req, bool link_video) {
  int64_t id = 0;
  {
    pqxx::nontransaction txn(conn);
    id = txn.exec_prepared1(kNextId.name)[0].as<int64_t>();
  }
  return retry_on_conflict(
      [&] {
        pqxx::work txn(conn);
        // The account's lock first: clips of one account queue here, so the
        // in-progress count and the nonce are read after the previous clip's
        // commit.
        eventstore::EventStore::lock_stream(txn, account::stream_id(caller.account_id));
        Decision d = decide(txn, caller, req, link_video, id);
        if (d.existing) return ClipCreated{*d.existing, 0, true};
        std::vector<eventstore::NewEvent> ce = {
            clip::requested(id, caller.account_id, caller.key_id, req, d.charge, d.video_download, now())};
        stamp(ce, caller.meta);
        stamp(d.account_events, caller.meta);
        store.append(txn, {{account::stream_id(caller.account_id),
                            eventstore::ExpectedVersion::exact(d.account.version), std::move(d.account_events)},
                           {clip::stream_id(id), eventstore::ExpectedVersion::no_stream(), std::move(ce)}});
        eventstore::EventStore::commit(txn);
        return ClipCreated{id, d.charge, false};
      },
      "the account is too busy; retry the request");
}

money::Micros quote_clip(pqxx::connection& conn, const Caller& caller, const clip::Request& req, bool link_video) {
  pqxx::work txn(conn);  // rolled back: a quote appends nothing
  clip::Request q = req;
  q.client_nonce.reset();  // a quote prices the range even when a nonce names an earlier clip
  Decision d = decide(txn, caller, q, link_video, 0);
  return d.charge;
}

namespace {

// Reads the clip and its account in one snapshot, decides the outcome with
// `decide` and appends it with the hold's settlement or release.
bool finish(const eventstore::EventStore& store, pqxx::connection& conn, int64_t clip_id, const Meta& meta,
            const std::function<std::optional<eventstore::NewEvent>(const clip::State&, const account::State&,
                                                                    std::vector<eventstore::NewEvent>&)>& decide) {
  return retry_on_conflict(
      [&] {
        clip::State c;
        account::State acc;
        {
          pqxx::read_transaction txn(conn);
          c = clip::fold(eventstore::EventStore::read_stream(txn, clip::stream_id(clip_id)));
          if (!c.exists || c.status != clip::kQueued) return false;
          acc = load_account(txn, c.account_id);
        }
        std::vector<eventstore::NewEvent> money;
        auto outcome = decide(c, acc, money);
        if (!outcome) return false;
        outcome->metadata = meta.to_json();
        stamp(money, meta);
        std::vector<eventstore::StreamAppend> appends = {
            {clip::stream_id(clip_id), eventstore::ExpectedVersion::exact(c.version), {*outcome}}};
        if (!money.empty())
          appends.push_back(
              {account::stream_id(c.account_id), eventstore::ExpectedVersion::exact(acc.version), std::move(money)});
        store.append_and_commit(conn, std::move(appends));
        return true;
      },
      "the clip is busy; retry");
}

}  // namespace

bool complete_clip(const eventstore::EventStore& store, pqxx::connection& conn, int64_t clip_id,
                   const clip::Rendered& rendered, const Meta& meta) {
  return finish(store, conn, clip_id, meta,
                [&](const clip::State& c, const account::State& acc, std::vector<eventstore::NewEvent>& money) {
                  const TimePoint at = now();
                  money = wallet::settle_hold(acc, c.hold, c.charge, at);
                  // The hold is what the clip costs; a hold already closed (never here, as
                  // the clip is queued) would charge nothing.
                  const money::Micros charged =
                      money.empty() ? 0 : money.front().data.at("charged_micros").get<int64_t>();
                  return clip::completed(c, rendered, charged, at);
                });
}

bool fail_clip(const eventstore::EventStore& store, pqxx::connection& conn, int64_t clip_id, const std::string& code,
               const std::string& message, const Meta& meta) {
  return finish(store, conn, clip_id, meta,
                [&](const clip::State& c, const account::State& acc, std::vector<eventstore::NewEvent>& money) {
                  money = wallet::release_hold(acc, c.hold);
                  return clip::failed(c, code, message, now());
                });
}

std::string clip_callback_secret(pqxx::connection& conn, int64_t clip_id) {
  return "whsec_" + crypto::hmac_sha256_hex(secrets::get(conn, "callback"), "clip:" + std::to_string(clip_id));
}

std::vector<std::string> abandon_clips(pqxx::work& txn, const account::State& acc, int64_t transcription_id,
                                       std::vector<eventstore::StreamAppend>& clip_appends,
                                       std::vector<eventstore::NewEvent>& account_events, const Meta& meta) {
  std::vector<std::string> streams;
  for (const auto& row : txn.exec_prepared(kQueuedOf.name, transcription_id)) {
    const int64_t id = row[0].as<int64_t>();
    const std::string sid = clip::stream_id(id);
    auto c = clip::fold(eventstore::EventStore::read_stream(txn, sid));
    auto outcome = clip::failed(c, "transcription_deleted", "the transcription was deleted", now());
    if (!outcome) continue;
    outcome->metadata = meta.to_json();
    clip_appends.push_back({sid, eventstore::ExpectedVersion::exact(c.version), {*outcome}});
    for (auto& e : wallet::release_hold(acc, c.hold)) {
      e.metadata = meta.to_json();
      account_events.push_back(std::move(e));
    }
  }
  // Every clip of the transcription, finished ones included, keeps only ids
  // and billing facts once it is deleted.
  for (const auto& row : txn.exec_prepared(kAllOf.name, transcription_id))
    streams.push_back(clip::stream_id(row[0].as<int64_t>()));
  return streams;
}

}  // namespace scribe::commands
