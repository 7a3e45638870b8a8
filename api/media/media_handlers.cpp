// GET /api/v1/transcriptions/{id}/media and POST .../video (api/media/handlers.h).
//  - Which stored file the player gets: playback::preferred_sources, the
//    first one stored. Whether a browser plays it as it is is decided once
//    per source, by probing it (ffprobe, with the database connection given
//    back), and kept in media_renditions; one it does not play is queued for
//    the rendition worker, which runs where clips render, never here.
//  - A link source's player gets its kept audio track (or the video fetched
//    for a video clip); while its job has not kept it yet the answer is 409
//    not_ready, and once the job is finished without it, 404.
#include <filesystem>

#include "api/caller.h"
#include "api/media/handlers.h"
#include "api/params.h"
#include "api/services.h"
#include "api/upload_store.h"
#include "commands/media_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "common/time.h"
#include "domain/clip.h"
#include "domain/limits.h"
#include "domain/media_playback.h"
#include "media/source_media.h"
#include "workers/media_renditions.h"

namespace scribe::api::media_api {
namespace {

namespace fs = std::filesystem;
namespace rend = workers::renditions;

const db::Statement kSubject{"media_api.subject",
                             "select source, upload_id, status, duration_seconds from transcriptions "
                             "where id = $1 and account_id = $2"};

struct Subject {
  std::string source;
  std::optional<std::string> upload_id;
  std::string status;
  std::optional<double> duration_seconds;
};

Subject load_subject(RequestContext& ctx, int64_t tid) {
  pqxx::read_transaction txn(ctx.db());
  auto r = txn.exec_prepared(kSubject.name, tid, ctx.caller().account_id);
  if (r.empty()) throw Error::not_found("transcription");
  Subject s;
  s.source = r[0][0].as<std::string>();
  if (!r[0][1].is_null()) s.upload_id = r[0][1].as<std::string>();
  s.status = r[0][2].as<std::string>();
  if (!r[0][3].is_null()) s.duration_seconds = r[0][3].as<double>();
  return s;
}

// The decision for `source` of the transcription: the one recorded, else
// made now from a probe of `path` and recorded (a concurrent one wins).
rend::Row decision(RequestContext& ctx, int64_t tid, const std::string& source, const std::string& path) {
  if (auto row = rend::load(ctx.db(), tid, source)) return *row;
  ctx.release_db();  // ffprobe may take a moment
  const playback::Probe probe = media::probe_streams(path);
  const playback::Decision d = playback::decide(probe);
  rend::Row row;
  row.transcription_id = tid;
  row.source = source;
  row.state = d.playable ? rend::kOriginal : rend::kQueued;
  row.kind = playback::to_string(d.kind);
  row.content_type = d.playable ? d.content_type : playback::rendition_content_type(d.kind);
  row.duration_seconds = probe.duration_seconds;
  rend::decide(ctx.db(), row);
  return rend::load(ctx.db(), tid, source).value_or(row);
}

}  // namespace

Response GetMediaHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  const Subject s = load_subject(ctx, tid);
  std::string source, path;
  for (const auto& candidate : playback::preferred_sources(s.source)) {
    const auto key = playback::source_key(tid, candidate, s.upload_id);
    if (auto p = key ? object_store().local_path(*key) : std::nullopt; p && fs::exists(*p)) {
      source = candidate;
      path = *p;
      break;
    }
  }
  if (source.empty()) {
    if (s.status == "processing")
      throw Error("not_ready", "the transcription's media is not stored yet; retry once its job has fetched it",
                  {{"reason", "media_pending"}, {"retry_after", limits::kMediaNotReadyRetryAfterSeconds}});
    throw Error("not_found", "the transcription's media is not stored", {{"reason", "no_stored_media"}});
  }
  const rend::Row row = decision(ctx, tid, source, path);
  if (row.state == rend::kQueued)
    throw Error("not_ready", "a copy of the media that browsers play is being made; retry in a few seconds",
                {{"reason", "rendition_in_progress"}, {"retry_after", limits::kMediaNotReadyRetryAfterSeconds}});
  if (row.state == rend::kFailed)
    throw Error("not_found", "no copy of the media that browsers play could be made: " + row.error.value_or(""),
                {{"reason", "no_playable_media"}});
  const bool original = row.state == rend::kOriginal;
  const std::string name = original ? source : source + playback::kRenditionSuffix;
  const int64_t expires = to_unix_micros(now()) / 1'000'000 + ctx.services.config.media_link_ttl_seconds;
  const std::string secret = secrets::get(ctx.db(), playback::kLinkSecretName);
  Json duration = row.duration_seconds ? Json(*row.duration_seconds)
                  : s.duration_seconds ? Json(*s.duration_seconds)
                                       : Json(nullptr);
  return Response::json(200, {{"url", playback::link(ctx.services.config.public_url, secret, tid, name, expires)},
                              {"expires_at", to_iso8601(from_unix_micros(expires * 1'000'000))},
                              {"content_type", row.content_type},
                              {"kind", row.kind},
                              {"rendition", original ? "original" : "transcoded"},
                              {"duration_seconds", duration}});
}

Response AddVideoHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  auto body = JsonBody::parse(ctx.req);
  const auto raw = body.string("upload_id", true, 1, 200);
  const auto upload_id = transcription::normalize_upload_id(*raw);
  if (!upload_id) throw Error::invalid("upload_id", "upload_id must be an id returned by POST /api/v1/uploads");
  const Subject s = load_subject(ctx, tid);
  uploads::require_completed(ctx.db(), ctx.caller().account_id, *upload_id);
  const auto path = object_store().local_path(uploads::object_key(*upload_id));
  if (!path) throw Error::invalid("upload_id", "upload '" + *upload_id + "' has no stored file");
  ctx.release_db();  // ffprobe may take a moment
  playback::Probe probe;
  try {
    probe = media::probe_streams(*path);
  } catch (const Error&) {
    throw Error("invalid_request", "upload '" + *upload_id + "' is not a media file that can be read",
                {{"field", "upload_id"}, {"reason", "no_video_stream"}});
  }
  commands::add_video(ctx.services.store, ctx.db(), caller_of(ctx), tid, s.source, *upload_id, probe);
  // The file is kept under the transcription's prefix (deleted with it),
  // linked rather than copied: the upload stays the caller's to use again.
  const std::string staged = uploads::staging_dir() + "/video-" + std::to_string(tid) + "-" + ctx.request_id;
  std::error_code ec;
  fs::create_hard_link(*path, staged, ec);
  if (ec) fs::copy_file(*path, staged, fs::copy_options::overwrite_existing);
  object_store().put_file(clip::source_video_key(tid), staged);
  // The player's decision and rendition were of the video this one replaces.
  object_store().remove_prefix(playback::rendition_key(tid, "video"));
  workers::renditions::forget(ctx.db(), tid, "video");
  // Deleted meanwhile: its objects must not come back.
  {
    pqxx::read_transaction txn(ctx.db());
    if (txn.exec_prepared(kSubject.name, tid, ctx.caller().account_id).empty()) {
      object_store().remove_prefix(clip::source_video_key(tid));
      throw Error::not_found("transcription");
    }
  }
  return Response::json(200, {{"transcription_id", tid},
                              {"upload_id", *upload_id},
                              {"video_duration_seconds", *probe.duration_seconds},
                              {"video_available", true}});
}

}  // namespace scribe::api::media_api
