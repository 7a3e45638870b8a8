#include "workers/rendition_worker.h"

#include <filesystem>

#include "common/db.h"
#include "common/error.h"
#include "common/log.h"
#include "common/object_store.h"
#include "domain/media_playback.h"
#include "media/source_media.h"
#include "workers/heartbeat.h"

namespace scribe::workers {
namespace {

namespace fs = std::filesystem;

// A rendition whose workers died this many times is failed rather than claimed again.
constexpr int kMaxRenditionClaims = 3;
// Rows of deleted transcriptions are swept at most this often.
constexpr int64_t kSweepSeconds = 600;

const db::Statement kUploadOf{"rendition_worker.upload_of", "select upload_id, true from transcriptions where id = $1"};

// nullopt: the transcription is gone; else its upload id (null for links).
std::optional<std::optional<std::string>> upload_of(pqxx::connection& conn, int64_t transcription_id) {
  pqxx::read_transaction txn(conn);
  auto r = txn.exec_prepared(kUploadOf.name, transcription_id);
  if (r.empty()) return std::nullopt;
  return r[0][0].is_null() ? std::optional<std::string>() : std::optional<std::string>(r[0][0].as<std::string>());
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

RenditionWorker::RenditionWorker(std::string database_url, WorkerOptions options)
    : url_(std::move(database_url)),
      options_(std::move(options)),
      loop_(std::make_unique<ClaimLoop>(url_, process_owner() + ":renditions", "rendition", options_.poll)),
      stopping_(loop_->stopping()) {}

RenditionWorker::~RenditionWorker() { stop(); }

void RenditionWorker::start() {
  fs::create_directories(fs::path(options_.work_dir) / "renditions");
  loop_->start(1, [this](pqxx::connection& conn, const std::string& slot_owner) -> ClaimLoop::Work {
    const int64_t now = unix_now();
    if (now - last_sweep_ >= kSweepSeconds) {
      last_sweep_ = now;
      renditions::sweep_deleted(conn);
    }
    auto row = renditions::claim(conn, slot_owner, options_.lease);
    if (!row) return {};
    return [this, &conn, row = *row, slot_owner] { process(conn, row, slot_owner); };
  });
}

void RenditionWorker::stop() { loop_->stop(); }

void RenditionWorker::process(pqxx::connection& conn, const renditions::Row& row, const std::string& slot_owner) {
  const int64_t tid = row.transcription_id;
  Json log_fields = {{"transcription_id", tid}, {"source", row.source}, {"claims", row.claims}};
  const playback::Kind kind = row.kind == "video" ? playback::Kind::Video : playback::Kind::Audio;
  const std::string type = playback::rendition_content_type(kind);
  auto fail = [&](const std::string& why) {
    renditions::finish(conn, tid, row.source, slot_owner, renditions::kFailed, row.content_type, why);
    log_fields["error"] = why;
    log::warn("media rendition failed", log_fields);
  };
  if (row.claims > kMaxRenditionClaims)
    return fail("the rendition was interrupted " + std::to_string(row.claims - 1) + " times");
  auto upload = upload_of(conn, tid);
  if (!upload) return fail("the transcription was deleted");
  const auto key = playback::source_key(tid, row.source, *upload);
  const auto in = key ? object_store().local_path(*key) : std::nullopt;
  if (!in || !fs::exists(*in)) return fail("the source is no longer stored");

  std::unique_ptr<pqxx::connection> hb;
  Heartbeat heartbeat(
      [&] {
        if (!hb || !hb->is_open()) hb = db::open_connection(url_);
        return renditions::renew(*hb, tid, row.source, slot_owner, options_.lease);
      },
      options_.lease, stopping_);
  const fs::path out =
      fs::path(options_.work_dir) / "renditions" / (std::to_string(tid) + "-" + row.source + "-" + slot_owner);
  std::error_code ec;
  const auto started = std::chrono::steady_clock::now();
  log::info("media rendition started", log_fields);
  try {
    media::make_rendition(*in, out.string(), kind, options_.clip_render_threads, &heartbeat.cancelled_flag());
  } catch (const Error& e) {
    fs::remove(out, ec);
    if (heartbeat.cancelled()) {
      if (stopping_) renditions::release(conn, tid, row.source, slot_owner);
      log::info("media rendition aborted", log_fields);
      return;
    }
    return fail(e.message());
  }
  object_store().put_file(playback::rendition_key(tid, row.source), out.string());
  const bool recorded = renditions::finish(conn, tid, row.source, slot_owner, renditions::kReady, type, std::nullopt);
  // Deleted meanwhile: its objects must not come back.
  if (!upload_of(conn, tid)) object_store().remove_prefix(playback::rendition_key(tid, row.source));
  log_fields["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::info(recorded ? "media rendition ready" : "media rendition made but no longer queued", log_fields);
}

}  // namespace scribe::workers
