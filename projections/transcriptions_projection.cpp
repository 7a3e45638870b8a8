// Writes the `transcriptions` and `jobs` tables (inline): the rows GET and
// list read, and the queue workers claim from; clears a transcription's
// draft text (transcription_partials.h) when it is retried or deleted.
// Events of a deleted transcription are redacted down to their billing
// fields, so a rebuild must read every other field as optional.
#include "common/db.h"
#include "domain/events.h"
#include "domain/transcription.h"
#include "projections/projection.h"
#include "projections/transcription_partials.h"

namespace scribe::projections {
namespace {

const db::Statement kInsert{
    "transcriptions.insert",
    "insert into transcriptions(id, account_id, key_id, status, stage, attempt, source, url, upload_id, "
    "original_filename, title, language, pipeline_code, addons, client_reference, callback_url, duration_seconds, "
    "billed_seconds, charge_micros, hold_id, quote_expires_at, created_at, updated_at) "
    "values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15, $16, $17, $18, $19, $20, "
    "$21::timestamptz, $22::timestamptz, $22::timestamptz) "
    "on conflict (id) do update set status = excluded.status, stage = excluded.stage, attempt = excluded.attempt, "
    "source = excluded.source, url = excluded.url, upload_id = excluded.upload_id, "
    "original_filename = excluded.original_filename, title = excluded.title, language = excluded.language, "
    "pipeline_code = excluded.pipeline_code, addons = excluded.addons, client_reference = excluded.client_reference, "
    "callback_url = excluded.callback_url, duration_seconds = excluded.duration_seconds, "
    "billed_seconds = excluded.billed_seconds, charge_micros = excluded.charge_micros, hold_id = excluded.hold_id, "
    "quote_expires_at = excluded.quote_expires_at, updated_at = excluded.updated_at"};
const db::Statement kRetry{"transcriptions.retry",
                           "update transcriptions set status = 'processing', stage = 'queued', attempt = $2, "
                           "billed_seconds = $3, charge_micros = $4, hold_id = $5, error = null, "
                           "completed_at = null, updated_at = $6::timestamptz where id = $1"};
const db::Statement kStage{"transcriptions.stage",
                           "update transcriptions set stage = $2, updated_at = $3::timestamptz, "
                           "processing_started_at = coalesce(processing_started_at, "
                           "case when $2 <> 'queued' then $3::timestamptz end) where id = $1"};
const db::Statement kCompleted{"transcriptions.completed",
                               "update transcriptions set status = 'completed', stage = 'completed', "
                               "completed_at = $2::timestamptz, updated_at = $2::timestamptz, "
                               "duration_seconds = coalesce($3, duration_seconds), "
                               "detected_language = coalesce($4, detected_language), title = coalesce($5, title), "
                               "processing_started_at = coalesce(processing_started_at, $2::timestamptz), "
                               "charge_micros = coalesce($6, charge_micros), "
                               "billed_seconds = coalesce($7, billed_seconds) where id = $1"};
const db::Statement kFailed{"transcriptions.failed",
                            "update transcriptions set status = 'failed', stage = 'failed', error = $2::jsonb, "
                            "completed_at = $3::timestamptz, updated_at = $3::timestamptz, "
                            "charge_micros = coalesce($4, charge_micros) where id = $1"};
// The worker measured the recording: the row shows the measured length and
// what the attempt now holds.
const db::Statement kMeasured{"transcriptions.measured",
                              "update transcriptions set duration_seconds = $2, billed_seconds = $3, "
                              "charge_micros = $4, hold_id = $5, updated_at = $6::timestamptz where id = $1"};
const db::Statement kDelete{"transcriptions.delete", "delete from transcriptions where id = $1"};
const db::Statement kEnqueue{"jobs.enqueue",
                             "insert into jobs(transcription_id, attempt, account_id, enqueued_at) "
                             "values ($1, $2, $3, $4::timestamptz) on conflict do nothing"};
// A realtime session's transcription (domain/realtime.h): live while the
// session streams, with no job and no hold of its own; its job is queued
// once the session ended with audio, or it is cancelled without any.
const db::Statement kLiveInsert{
    "transcriptions.live_insert",
    "insert into transcriptions(id, account_id, key_id, status, stage, attempt, source, title, language, "
    "pipeline_code, addons, billed_seconds, charge_micros, created_at, updated_at) "
    "values ($1, $2, $3, 'processing', 'live', 1, 'realtime', $4, $5, $6, '[]'::jsonb, 0, 0, $7::timestamptz, "
    "$7::timestamptz) on conflict (id) do nothing"};
const db::Statement kLiveRecorded{"transcriptions.live_recorded",
                                  "update transcriptions set stage = 'queued', duration_seconds = $2, "
                                  "billed_seconds = $3, charge_micros = $4, updated_at = $5::timestamptz, "
                                  "processing_started_at = $5::timestamptz where id = $1"};
const db::Statement kCancelled{"transcriptions.cancelled",
                               "update transcriptions set status = 'cancelled', stage = 'cancelled', "
                               "completed_at = $2::timestamptz, updated_at = $2::timestamptz where id = $1"};
const db::Statement kDequeue{"jobs.remove", "delete from jobs where transcription_id = $1"};

class TranscriptionsProjection final : public Projection {
 public:
  std::string name() const override { return "transcriptions"; }
  std::vector<std::string> tables() const override { return {"transcriptions", "jobs"}; }
  bool is_inline() const override { return true; }

  void apply(pqxx::work& txn, const eventstore::RecordedEvent& e) override {
    const Json& d = e.data;
    if (e.type == events::kTranscriptionQuoted || e.type == events::kTranscriptionCreated) {
      bool created = e.type == events::kTranscriptionCreated;
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kInsert.name, id, d.at("account_id").get<int64_t>(), optional_field<int64_t>(d, "key_id"),
                        created ? transcription::kProcessing : transcription::kQuoted,
                        created ? "queued" : transcription::kQuoted, created ? 1 : 0, d.at("source").get<std::string>(),
                        optional_field<std::string>(d, "url"), optional_field<std::string>(d, "upload_id"),
                        optional_field<std::string>(d, "original_filename"), optional_field<std::string>(d, "title"),
                        d.at("language").get<std::string>(), d.at("pipeline_code").get<std::string>(),
                        d.value("addons", Json::array()).dump(), optional_field<std::string>(d, "client_reference"),
                        optional_field<std::string>(d, "callback_url"), optional_field<double>(d, "duration_seconds"),
                        d.at("billed_seconds").get<int64_t>(), d.at("charge_micros").get<int64_t>(),
                        optional_field<std::string>(d, "hold_id"),
                        created ? std::nullopt : optional_field<std::string>(d, "expires_at"), e.recorded_at);
      if (created) txn.exec_prepared(kEnqueue.name, id, 1, d.at("account_id").get<int64_t>(), e.recorded_at);
    } else if (e.type == events::kTranscriptionLiveStarted) {
      txn.exec_prepared(kLiveInsert.name, d.at("transcription_id").get<int64_t>(), d.at("account_id").get<int64_t>(),
                        optional_field<int64_t>(d, "key_id"), optional_field<std::string>(d, "title"),
                        d.value("language", "auto"), d.value("pipeline_code", "standard"), e.recorded_at);
    } else if (e.type == events::kTranscriptionLiveRecorded) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kLiveRecorded.name, id, d.at("duration_seconds").get<double>(),
                        d.value("billed_seconds", int64_t{0}), d.value("charge_micros", int64_t{0}), e.recorded_at);
      txn.exec_prepared(kEnqueue.name, id, 1, d.at("account_id").get<int64_t>(), e.recorded_at);
    } else if (e.type == events::kTranscriptionCancelled) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kCancelled.name, id, e.recorded_at);
      txn.exec_prepared(kDequeue.name, id);
    } else if (e.type == events::kTranscriptionRetried) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      const int attempt = d.at("attempt").get<int>();
      txn.exec_prepared(kRetry.name, id, attempt, d.at("billed_seconds").get<int64_t>(),
                        d.at("charge_micros").get<int64_t>(), optional_field<std::string>(d, "hold_id"), e.recorded_at);
      txn.exec_prepared(kEnqueue.name, id, attempt, d.at("account_id").get<int64_t>(), e.recorded_at);
      partials::clear(txn, id);  // the new attempt's draft starts empty
    } else if (e.type == events::kTranscriptionStageChanged) {
      txn.exec_prepared(kStage.name, d.at("transcription_id").get<int64_t>(), d.at("stage").get<std::string>(),
                        e.recorded_at);
    } else if (e.type == events::kTranscriptionMeasured) {
      txn.exec_prepared(kMeasured.name, d.at("transcription_id").get<int64_t>(),
                        optional_field<double>(d, "duration_seconds"), d.at("billed_seconds").get<int64_t>(),
                        d.at("charge_micros").get<int64_t>(), optional_field<std::string>(d, "hold_id"), e.recorded_at);
    } else if (e.type == events::kTranscriptionCompleted) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kCompleted.name, id, e.recorded_at, optional_field<double>(d, "duration_seconds"),
                        optional_field<std::string>(d, "detected_language"), optional_field<std::string>(d, "title"),
                        optional_field<int64_t>(d, "charge_micros"), optional_field<int64_t>(d, "billed_seconds"));
      txn.exec_prepared(kDequeue.name, id);
    } else if (e.type == events::kTranscriptionFailed) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kFailed.name, id, d.value("error", Json(nullptr)).dump(), e.recorded_at,
                        optional_field<int64_t>(d, "charge_micros"));
      txn.exec_prepared(kDequeue.name, id);
    } else if (e.type == events::kTranscriptionDeleted) {
      const int64_t id = d.at("transcription_id").get<int64_t>();
      txn.exec_prepared(kDelete.name, id);
      txn.exec_prepared(kDequeue.name, id);
      partials::clear(txn, id);  // the recognizer's words go with it
    }
  }
};

}  // namespace

Projection& transcriptions_projection() {
  static TranscriptionsProjection p;
  return p;
}

}  // namespace scribe::projections
