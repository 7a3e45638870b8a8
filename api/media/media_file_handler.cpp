// GET /media/files/{id}/{name}: a transcription's media through the signed
// link GET .../media answers (api/media/handlers.h). The link is the
// authorization: no key, no rate limit of the key's kind. A link that is
// malformed, tampered with or expired is 403 forbidden (as clip file links
// are: the request is refused, not unauthenticated; GET .../media gives a
// fresh one). Ranges as api/file_response.h answers them.
#include <filesystem>

#include "api/file_response.h"
#include "api/media/handlers.h"
#include "api/params.h"
#include "api/services.h"
#include "common/db.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "common/time.h"
#include "domain/media_playback.h"
#include "workers/media_renditions.h"

namespace scribe::api::media_api {
namespace {

namespace rend = workers::renditions;

const db::Statement kUpload{"media_api.file_upload", "select upload_id from transcriptions where id = $1"};

Error forbidden() {
  return Error("forbidden", "this media link is invalid or has expired; GET the transcription's media for a fresh one");
}

}  // namespace

Response MediaFileHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  const std::string name = ctx.params.at("name");
  QueryParams q(ctx.req);
  auto expires = q.string("expires", 20);
  auto signature = q.string("signature", 128);
  if (!expires || !signature) throw forbidden();
  int64_t exp = 0;
  try {
    size_t used = 0;
    exp = std::stoll(*expires, &used);
    if (used != expires->size()) throw forbidden();
  } catch (const std::exception&) {
    throw forbidden();
  }
  if (!playback::verify_link(secrets::get(ctx.db(), playback::kLinkSecretName), tid, name, exp, *signature,
                             to_unix_micros(now()) / 1'000'000))
    throw forbidden();
  const std::string suffix = playback::kRenditionSuffix;
  const bool rendition = name.size() > suffix.size() && name.ends_with(suffix);
  const std::string source = rendition ? name.substr(0, name.size() - suffix.size()) : name;
  std::optional<std::string> upload_id;
  {
    pqxx::read_transaction txn(ctx.db());
    auto r = txn.exec_prepared(kUpload.name, tid);
    if (r.empty()) throw Error::not_found("transcription");
    if (!r[0][0].is_null()) upload_id = r[0][0].as<std::string>();
  }
  const auto row = rend::load(ctx.db(), tid, source);
  ctx.release_db();
  // What the link names must still be what is served: the source as it is,
  // or its finished rendition (another video added since makes the old
  // links to "video" answer 404).
  if (!row || row->state != (rendition ? rend::kReady : rend::kOriginal)) throw Error::not_found("media file");
  const auto key = rendition ? std::optional<std::string>(playback::rendition_key(tid, source))
                             : playback::source_key(tid, source, upload_id);
  const auto path = key ? object_store().local_path(*key) : std::nullopt;
  std::shared_ptr<FileBody> file = path ? FileBody::open(*path) : nullptr;
  if (!file) throw Error::not_found("media file");
  Response res;
  res.status = 200;
  res.content_type = row->content_type;
  res.set_header("Cache-Control", "private, max-age=3600");
  res.set_header("Content-Disposition", "inline");
  return ranged_file(ctx, std::move(file), std::move(res));
}

}  // namespace scribe::api::media_api
