#include "api/transcription_view.h"

#include "common/db.h"
#include "common/sql_time.h"
#include "domain/money.h"
#include "domain/pricing.h"

namespace scribe::api {
namespace {

#define SCRIBE_TRANSCRIPTION_COLUMNS                                                                            \
  "id, status, stage, attempt, source, url, upload_id, original_filename, title, language, detected_language, " \
  "pipeline_code, addons::text, client_reference, callback_url, duration_seconds, billed_seconds, "             \
  "charge_micros, error::text, " SCRIBE_SQL_ISO_MS("created_at") ", " SCRIBE_SQL_ISO_MS(                        \
      "processing_started_at") ", " SCRIBE_SQL_ISO_MS("completed_at") ", " SCRIBE_SQL_ISO_MS("quote_expires_at")

const db::Statement kOne{"transcriptions.view_one", "select " SCRIBE_TRANSCRIPTION_COLUMNS
                                                    " from transcriptions where id = $1 and account_id = $2"};
const db::Statement kPage{"transcriptions.view_page",
                          "select " SCRIBE_TRANSCRIPTION_COLUMNS
                          " from transcriptions where account_id = $1 "
                          "and ($2::bigint is null or id < $2) and ($3::text is null or client_reference = $3) "
                          "and (not $4 or api) order by id desc limit $5"};

Json text_or_null(const pqxx::field& f) { return f.is_null() ? Json(nullptr) : Json(f.c_str()); }

Json render(const pqxx::row& r) {
  const int64_t billed_seconds = r[16].as<int64_t>();
  const int64_t charge = r[17].as<int64_t>();
  Json j = {
      {"id", r[0].as<int64_t>()},
      {"status", r[1].c_str()},
      {"stage", r[2].c_str()},
      {"attempt", r[3].as<int>()},
      {"source", r[4].c_str()},
      {"title", text_or_null(r[8])},
      {"language", r[9].c_str()},
      {"detected_language", text_or_null(r[10])},
      {"pipeline_code", r[11].c_str()},
      {"addons", Json::parse(r[12].c_str())},
      {"client_reference", text_or_null(r[13])},
      {"duration_seconds", r[15].is_null() ? Json(nullptr) : Json(r[15].as<double>())},
      {"billed_minutes", pricing::billed_minutes(billed_seconds)},
      {"retail_usd", money::to_usd(charge)},
      {"charge_usd", money::to_usd(charge)},
      {"error", r[18].is_null() ? Json(nullptr) : Json::parse(r[18].c_str())},
      {"created_at", r[19].c_str()},
      {"processing_started_at", text_or_null(r[20])},
      {"completed_at", text_or_null(r[21])},
  };
  if (std::string(r[4].c_str()) == "upload") {
    j["upload_id"] = text_or_null(r[6]);
    j["original_filename"] = text_or_null(r[7]);
  } else {
    j["url"] = text_or_null(r[5]);
  }
  if (!r[14].is_null()) j["callback_url"] = r[14].c_str();
  if (!r[22].is_null()) j["quote_expires_at"] = r[22].c_str();
  return j;
}

}  // namespace

std::optional<Json> load_transcription(pqxx::transaction_base& txn, int64_t account_id, int64_t id) {
  auto res = txn.exec_prepared(kOne.name, id, account_id);
  if (res.empty()) return std::nullopt;
  return render(res[0]);
}

std::vector<Json> list_transcriptions(pqxx::transaction_base& txn, int64_t account_id, std::optional<int64_t> before,
                                      const std::optional<std::string>& client_reference, bool api_only, int limit) {
  std::vector<Json> out;
  for (const auto& r : txn.exec_prepared(kPage.name, account_id, before, client_reference, api_only, limit))
    out.push_back(render(r));
  return out;
}

}  // namespace scribe::api
