// GET /clips/files/{clipId}/{name}: a clip's file through its signed link.
// The link is the authorization (no key, no rate limit of the key's kind);
// what bounds the work of a download is:
//  - the body: the requested range is read from the object store 64 KiB at
//    a time as the socket drains (Response::file, api/http_server.cpp), so a
//    download holds one buffer, never the file, however slow its reader;
//  - the downloads of one clip file at once (every link to it together):
//    at most limits::kClipFileDownloadsAtOnce in this process, each holding a
//    slot until its body is sent or its connection is gone; one more is 429
//    rate_limited with retry_after.
// Ranges (one range, 206 with Content-Range; past the end 416) are answered by
// api/file_response.h.
#include "api/file_response.h"
#include "api/handlers/handlers.h"
#include "api/keyed_slots.h"
#include "api/params.h"
#include "api/services.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "common/time.h"
#include "domain/clip.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

// The clip's transcription and its file (an object once the clip completed).
const db::Statement kClipFile{"clip_api.file",
                              "select transcription_id, coalesce(jsonb_typeof(view->'file') = 'object', false), "
                              "view->'file'->>'name', view->'file'->>'content_type' from clips where id = $1"};

KeyedSlots& downloads() {
  static KeyedSlots slots(limits::kClipFileDownloadsAtOnce);
  return slots;
}

Error forbidden() { return Error("forbidden", "this link is invalid or has expired; GET the clip for a fresh one"); }

}  // namespace

Response ClipFileHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("clipId", "clip");
  const std::string name = ctx.params.at("name");
  QueryParams q(ctx.req);
  auto expires = q.string("expires", 20);
  auto signature = q.string("signature", 128);
  if (!expires || !signature || (name != "clip.mp4" && name != "clip.m4a" && name != "clip.srt")) throw forbidden();
  int64_t exp = 0;
  try {
    exp = std::stoll(*expires);
  } catch (const std::exception&) {
    throw forbidden();
  }
  if (!clip::verify_link(secrets::get(ctx.db(), clip::kLinkSecretName), id, name, exp, *signature,
                         to_unix_micros(now()) / 1'000'000))
    throw forbidden();
  // Taken before any file work, and given back on every path that does not
  // send the file (the hold goes with this frame).
  std::shared_ptr<void> slot = downloads().take(std::to_string(id) + "/" + name);
  if (!slot)
    throw Error("rate_limited",
                "at most " + std::to_string(limits::kClipFileDownloadsAtOnce) +
                    " downloads of one clip file run at once; retry after " +
                    std::to_string(limits::kClipFileBusyRetryAfterSeconds) + " s",
                {{"retry_after", limits::kClipFileBusyRetryAfterSeconds}});
  int64_t tid = 0;
  bool has_file = false;
  std::string file_name, content_type;
  {
    pqxx::read_transaction txn(ctx.db());
    auto r = txn.exec_prepared(kClipFile.name, id);
    if (r.empty()) throw Error::not_found("clip");
    tid = r[0][0].as<int64_t>();
    has_file = r[0][1].as<bool>();
    file_name = r[0][2].is_null() ? "" : r[0][2].c_str();
    content_type = r[0][3].is_null() ? "" : r[0][3].c_str();
  }
  ctx.release_db();
  if (!has_file || (name != "clip.srt" && file_name != name)) throw Error::not_found("clip file");
  auto path = object_store().local_path(clip::file_key(tid, id, name));
  std::shared_ptr<FileBody> file = path ? FileBody::open(*path) : nullptr;
  if (!file) throw Error::not_found("clip file");
  file->hold = std::move(slot);
  Response res;
  res.status = 200;
  res.content_type = name == "clip.srt" ? "application/x-subrip; charset=utf-8" : content_type;
  res.set_header("Content-Disposition", "inline; filename=\"clip-" + std::to_string(id) + name.substr(4) + "\"");
  res.set_header("Cache-Control", "private, max-age=3600");
  return ranged_file(ctx, std::move(file), std::move(res));
}

}  // namespace scribe::api
