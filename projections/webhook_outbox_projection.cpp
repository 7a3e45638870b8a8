// Writes the webhook outbox (asynchronous): one row per delivery that an event
// owes a registered webhook or a per-request callback, in the same transaction
// as the projection's checkpoint, so a committed event is queued exactly once
// even when the process dies midway. The dispatcher (workers/
// webhook_dispatcher.cpp) sends the rows; its per-delivery state row is
// created here too, with `on conflict do nothing`, so a rebuild re-creates the
// outbox without sending anything that was already sent.
//
// The projection keeps its own memory of targets and snapshots
// (webhook_outbox_targets, webhook_outbox_subjects) instead of reading other
// read models, because those show the present, and a delivery must describe
// the moment of its event however late the projection runs.
#include "common/db.h"
#include "common/time.h"
#include "domain/events.h"
#include "domain/webhook.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kUpsertTarget{"webhook_outbox.upsert_target",
                                  "insert into webhook_outbox_targets(key_id, webhook_id, url, events) "
                                  "values ($1, $2, $3, $4::jsonb) on conflict (key_id) do update set "
                                  "webhook_id = excluded.webhook_id, url = excluded.url, events = excluded.events"};
const db::Statement kDeleteTarget{"webhook_outbox.delete_target",
                                  "delete from webhook_outbox_targets where key_id = $1"};
const db::Statement kTarget{"webhook_outbox.target",
                            "select webhook_id, url, events::text from webhook_outbox_targets where key_id = $1"};
const db::Statement kUpsertSubject{"webhook_outbox.upsert_subject",
                                   "insert into webhook_outbox_subjects(transcription_id, account_id, key_id, "
                                   "callback_url, snapshot) values ($1, $2, $3, $4, $5::jsonb) "
                                   "on conflict (transcription_id) do update set account_id = excluded.account_id, "
                                   "key_id = excluded.key_id, callback_url = excluded.callback_url, "
                                   "snapshot = excluded.snapshot"};
const db::Statement kSubject{"webhook_outbox.subject",
                             "select account_id, key_id, callback_url, snapshot::text from webhook_outbox_subjects "
                             "where transcription_id = $1"};
const db::Statement kUpdateSnapshot{"webhook_outbox.update_snapshot",
                                    "update webhook_outbox_subjects set snapshot = $2::jsonb "
                                    "where transcription_id = $1"};
const db::Statement kDeleteSubject{"webhook_outbox.delete_subject",
                                   "delete from webhook_outbox_subjects where transcription_id = $1"};
const db::Statement kInsertOutbox{"webhook_outbox.insert",
                                  "insert into webhook_outbox(id, event_id, event, account_id, transcription_id, "
                                  "webhook_id, url, body, created_at, clip_id) values ($1, $2, $3, $4, $5, $6, $7, $8, "
                                  "$9::timestamptz, $10) on conflict (id) do nothing"};
// History older than a day (a new outbox replaying old events) is never sent:
// the retry schedule ends well within a day of an event.
const db::Statement kInsertDelivery{"webhook_outbox.insert_delivery",
                                    "insert into webhook_deliveries(delivery_id, status) values ($1, "
                                    "case when $2::timestamptz < now() - interval '1 day' then 'expired' "
                                    "else 'pending' end) on conflict (delivery_id) do nothing"};
const db::Statement kDeleteDeliveries{"webhook_outbox.delete_deliveries",
                                      "with gone as (delete from webhook_outbox where transcription_id = $1 "
                                      "returning id) delete from webhook_deliveries where delivery_id in "
                                      "(select id from gone)"};
const db::Statement kNotify{"webhook_outbox.notify", "notify scribe_webhooks"};

int64_t unix_seconds(const std::string& recorded_at) {
  auto t = parse_iso8601(recorded_at);
  return t ? to_unix_micros(*t) / 1000000 : 0;
}

class WebhookOutboxProjection final : public Projection {
 public:
  std::string name() const override { return "webhook_outbox"; }
  std::vector<std::string> tables() const override {
    return {"webhook_outbox", "webhook_outbox_targets", "webhook_outbox_subjects"};
  }
  bool is_inline() const override { return false; }

  void apply_batch(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) override {
    queued_ = false;
    for (const auto& e : events) apply(txn, e);
    // Wakes every dispatcher when this transaction commits (not before).
    if (queued_) txn.exec_prepared(kNotify.name);
  }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kWebhookRegistered) {
      txn.exec_prepared(kUpsertTarget.name, d.at("key_id").get<int64_t>(), d.at("webhook_id").get<int64_t>(),
                        d.at("url").get<std::string>(), d.at("events").dump());
    } else if (e.type == events::kWebhookRevoked) {
      txn.exec_prepared(kDeleteTarget.name, d.at("key_id").get<int64_t>());
    } else if (e.type == events::kWebhookTestRequested) {
      auto target = txn.exec_prepared(kTarget.name, d.at("key_id").get<int64_t>());
      if (target.empty() || target[0][0].as<int64_t>() != d.at("webhook_id").get<int64_t>()) return;
      Json data = {{"message", d.value("message", "")}, {"delivered_at", to_iso8601(*parse_iso8601(e.recorded_at))}};
      enqueue(txn, e, webhook::kTest, d.at("account_id").get<int64_t>(), std::nullopt, target[0][0].as<int64_t>(),
              target[0][1].c_str(), data);
    } else if (e.type == events::kTranscriptionCreated) {
      Json snapshot;
      webhook::evolve_snapshot(snapshot, e.type, d, e.recorded_at);
      txn.exec_prepared(kUpsertSubject.name, d.at("transcription_id").get<int64_t>(), d.at("account_id").get<int64_t>(),
                        optional_field<int64_t>(d, "key_id"), optional_field<std::string>(d, "callback_url"),
                        snapshot.dump());
    } else if (e.type == events::kTranscriptionRetried || e.type == events::kTranscriptionStageChanged ||
               e.type == events::kTranscriptionCompleted || e.type == events::kTranscriptionFailed) {
      transition(txn, e);
    } else if (e.type == events::kClipCompleted || e.type == events::kClipFailed) {
      clip_outcome(txn, e);
    } else if (e.type == events::kTranscriptionDeleted) {
      // Nothing more is sent about a deleted transcription, and nothing of it stays here.
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kDeleteSubject.name, id);
      txn.exec_prepared(kDeleteDeliveries.name, id);
    }
  }

 private:
  // A clip event goes to the registered webhook of the key that created the
  // clip (when it subscribes) and to the clip's callback_url. The body keeps
  // the clip's stored view; the dispatcher turns it into the public Clip with
  // links signed at each attempt.
  void clip_outcome(pqxx::work& txn, const eventstore::RecordedEvent& e) {
    const Json& d = e.data;
    if (!d.contains("clip")) return;  // redacted: the transcription was deleted
    const std::string kind = e.type == events::kClipCompleted ? webhook::kClipCompleted : webhook::kClipFailed;
    const int64_t clip_id = d.at("clip_id").get<int64_t>();
    const int64_t tid = d.at("transcription_id").get<int64_t>();
    const int64_t account_id = d.at("account_id").get<int64_t>();
    Json view = d.at("clip");
    view["id"] = clip_id;
    const Json data = {{"clip", view}};
    if (auto key = optional_field<int64_t>(d, "key_id")) {
      auto target = txn.exec_prepared(kTarget.name, *key);
      if (!target.empty() && webhook::subscribes(Json::parse(target[0][2].c_str()), kind))
        enqueue(txn, e, kind, account_id, tid, target[0][0].as<int64_t>(), target[0][1].c_str(), data, clip_id);
    }
    if (auto url = optional_field<std::string>(d, "callback_url"))
      enqueue(txn, e, kind, account_id, tid, std::nullopt, *url, data, clip_id);
  }

  void transition(pqxx::work& txn, const eventstore::RecordedEvent& e) {
    const int64_t id = e.data.at("transcription_id").get<int64_t>();
    auto rows = txn.exec_prepared(kSubject.name, id);
    if (rows.empty()) return;
    const auto& row = rows[0];
    Json snapshot = Json::parse(row[3].c_str());
    webhook::evolve_snapshot(snapshot, e.type, e.data, e.recorded_at);
    txn.exec_prepared(kUpdateSnapshot.name, id, snapshot.dump());
    auto kind = webhook::delivery_kind(e.type);
    if (!kind) return;
    const int64_t account_id = row[0].as<int64_t>();
    Json data = {{"transcription", snapshot}};
    if (!row[1].is_null()) {
      auto target = txn.exec_prepared(kTarget.name, row[1].as<int64_t>());
      if (!target.empty() && webhook::subscribes(Json::parse(target[0][2].c_str()), *kind))
        enqueue(txn, e, *kind, account_id, id, target[0][0].as<int64_t>(), target[0][1].c_str(), data);
    }
    if (!row[2].is_null()) enqueue(txn, e, *kind, account_id, id, std::nullopt, row[2].c_str(), data);
  }

  void enqueue(pqxx::work& txn, const eventstore::RecordedEvent& e, const std::string& kind, int64_t account_id,
               std::optional<int64_t> transcription_id, std::optional<int64_t> webhook_id, const std::string& url,
               const Json& data, std::optional<int64_t> clip_id = std::nullopt) {
    const int64_t position = e.global.position;
    const int64_t id = webhook::delivery_id(position, !webhook_id.has_value());
    const std::string event_id = webhook::event_id(position);
    const std::string body = webhook::delivery_body(event_id, kind, unix_seconds(e.recorded_at), data);
    txn.exec_prepared(kInsertOutbox.name, id, event_id, kind, account_id, transcription_id, webhook_id, url, body,
                      e.recorded_at, clip_id);
    txn.exec_prepared(kInsertDelivery.name, id, e.recorded_at);
    queued_ = true;
  }

  bool queued_ = false;
};

}  // namespace

Projection& webhook_outbox_projection() {
  static WebhookOutboxProjection p;
  return p;
}

}  // namespace scribe::projections
