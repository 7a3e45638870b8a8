// POST /api/v1/transcriptions/{id}/clips, GET .../clips/quote, GET .../clips
// and GET .../clips/{clipId} (with `wait`, a long-poll like /wait); the
// signed file links GET /clips/files/{clipId}/{name} are served by
// clip_file_handler.cpp.
//  - A clip's options are checked in domain/clip.cpp; what needs the
//    transcription, its words and the wallet in commands/clip_commands.cpp;
//    what needs the stored media (is there audio? a video stream?) here,
//    before the command, with the database connection released for ffprobe.
//  - The links are signed with the server secret "clip_links" for an hour
//    from each read; the file route checks the signature and the expiry and
//    needs no key (the link is the authorization, as for presigned uploads).
#include <sstream>

#include "api/caller.h"
#include "api/handlers/handlers.h"
#include "api/params.h"
#include "api/services.h"
#include "api/wait_registry.h"
#include "commands/clip_commands.h"
#include "common/db.h"
#include "common/error.h"
#include "common/log.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "domain/clip.h"
#include "domain/limits.h"
#include "media/source_media.h"

namespace scribe::api {
namespace {

const db::Statement kClip{"clip_api.one",
                          "select view::text from clips where id = $1 and transcription_id = $2 and account_id = $3"};
const db::Statement kClips{"clip_api.list",
                           "select id, view::text from clips where transcription_id = $1 and account_id = $2 "
                           "order by id desc limit $3"};
const db::Statement kOwned{"clip_api.owned", "select 1 from transcriptions where id = $1 and account_id = $2"};
const db::Statement kById{"clip_api.by_id", "select transcription_id, view::text from clips where id = $1"};

Json render(pqxx::connection& conn, const Services& services, int64_t id, const std::string& view_text) {
  return clip::to_json(Json::parse(view_text), id, services.config.public_url,
                       secrets::get(conn, clip::kLinkSecretName), now());
}

std::optional<Json> load_clip(pqxx::connection& conn, const Services& services, int64_t account_id,
                              int64_t transcription_id, int64_t clip_id) {
  std::string view;
  {
    pqxx::read_transaction txn(conn);
    auto r = txn.exec_prepared(kClip.name, clip_id, transcription_id, account_id);
    if (r.empty()) return std::nullopt;
    view = r[0][0].c_str();
  }
  return render(conn, services, clip_id, view);
}

// The request's options, from the JSON body (POST) or the query (quote): the
// quote's parameters become the JSON values they spell (QueryParams::as_body),
// so one reader and one set of rules serve both and the two cannot disagree.
const std::vector<std::string> kNumberOptions = {"start_seconds", "end_seconds", "words_per_line", "max_charge_usd"};
const std::vector<std::string> kBooleanOptions = {"rights_affirmed"};
const std::vector<std::string> kStringOptions = {"aspect",          "style",   "output", "caption_position",
                                                 "highlight_color", "framing", "title"};
const Range kNumber{0.0, 1e9};

clip::Request parse_request(const JsonBody& b, int64_t transcription_id, bool with_post_fields) {
  clip::Request r;
  r.transcription_id = transcription_id;
  r.start_seconds = *b.number("start_seconds", true, kNumber);
  r.end_seconds = *b.number("end_seconds", true, kNumber);
  if (auto v = b.string("aspect", false, 0, 16)) r.aspect = *v;
  if (auto v = b.string("style", false, 0, 32)) r.style = *v;
  if (auto v = b.string("output", false, 0, 32)) r.output = *v;
  if (auto v = b.string("caption_position", false, 0, 16)) r.caption_position = *v;
  if (auto v = b.integer("words_per_line")) {
    if (*v < limits::kClipWordsPerLineMin || *v > limits::kClipWordsPerLineMax)
      throw Error::invalid("words_per_line", "words_per_line must be an integer from 1 to 6");
    r.words_per_line = static_cast<int>(*v);
  }
  if (auto v = b.string("highlight_color", false, 0, 16)) r.highlight_color = *v;
  if (auto v = b.string("framing", false, 0, 16)) r.framing = *v;
  r.rights_affirmed = b.boolean("rights_affirmed").value_or(false);
  // 4 bytes per code point at most; domain/clip.cpp counts code points and
  // refuses control characters.
  if (auto v = b.string("title", false, 0, 4 * limits::kClipTitleMaxChars + 4)) {
    if (!v->empty()) r.title = *v;
  }
  if (auto v = b.number("max_charge_usd", false, kNumber)) r.max_charge = money::from_usd(*v);
  if (with_post_fields) {
    r.client_nonce = b.string("client_nonce", false, 0, 64);
    r.callback_url = b.string("callback_url", false, 0, limits::kCallbackUrlMaxLength);
  }
  clip::check_request(r);
  return r;
}

// The media checks: audio kept for the transcription (409 not_ready), and for
// `video` a source video (400 video_unavailable). Returns whether the render
// needs a link's source video (the command decides whether that is a new
// download, under the account's lock).
bool check_media(RequestContext& ctx, const clip::Request& r) {
  commands::ClipSubject subject;
  {
    pqxx::read_transaction txn(ctx.db());
    subject = commands::clip_subject(txn, ctx.caller().account_id, r.transcription_id);
  }
  clip::check_range(r, subject.duration_seconds);
  const bool upload = subject.source == "upload";
  const std::string audio_key = clip::audio_key(r.transcription_id, upload ? subject.upload_id : std::nullopt);
  if (!object_store().exists(audio_key))
    throw Error("not_ready", "the transcription's audio is not stored, so no clip can be made of it",
                {{"reason", "no_stored_audio"}});
  if (r.output != "video") return false;
  if (subject.source == "realtime")
    throw Error("video_unavailable", "a realtime session recorded audio only; make an audiogram or an audio clip",
                {{"reason", "no_source_video"}});
  if (upload) {
    // The original video added to it (POST .../video) was checked then.
    if (object_store().exists(clip::source_video_key(r.transcription_id))) return false;
    auto path = object_store().local_path(audio_key);
    ctx.release_db();  // ffprobe may take a moment
    if (!path || !media::has_video_stream(*path))
      throw Error("video_unavailable",
                  "the uploaded file has no video; add the original video (POST /api/v1/transcriptions/" +
                      std::to_string(r.transcription_id) + "/video) to make a video clip",
                  {{"reason", "no_source_video"}});
    return false;
  }
  if (!r.rights_affirmed)
    throw Error("video_unavailable",
                "a video clip of a link needs rights_affirmed: true (you own the video or may reuse it)",
                {{"reason", "rights_not_affirmed"}});
  return true;
}

}  // namespace

Response CreateClipHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  auto body = JsonBody::parse(ctx.req);
  clip::Request r = parse_request(body, tid, true);
  if (r.callback_url) ctx.services.check_url(*r.callback_url, "callback_url");
  const bool link_video = check_media(ctx, r);
  auto created = commands::create_clip(ctx.services.store, ctx.db(), caller_of(ctx), r, link_video);
  // Read by id alone: the clip is the caller's (created now, or the first
  // clip of this account with the nonce, on whichever transcription).
  std::string view;
  {
    pqxx::read_transaction txn(ctx.db());
    auto row = txn.exec_prepared(kById.name, created.clip_id);
    if (row.empty()) throw Error::not_found("clip");
    view = row[0][1].c_str();
  }
  auto clip = render(ctx.db(), ctx.services, created.clip_id, view);
  // The secret of the clip's own callback: a repeated nonce answers for the
  // first clip, which has one only if its request named a callback_url.
  bool has_callback = r.callback_url.has_value();
  if (created.repeated) {
    pqxx::read_transaction txn(ctx.db());
    auto events = eventstore::EventStore::read_stream(txn, clip::stream_id(created.clip_id));
    has_callback = !events.empty() && events.front().data.contains("callback_url") &&
                   !events.front().data.at("callback_url").is_null();
  }
  if (has_callback) clip["callback_secret"] = commands::clip_callback_secret(ctx.db(), created.clip_id);
  return Response::json(202, clip);
}

Response ClipQuoteHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  clip::Request r =
      parse_request(QueryParams(ctx.req).as_body(kNumberOptions, kBooleanOptions, kStringOptions), tid, false);
  const bool link_video = check_media(ctx, r);
  const money::Micros charge = commands::quote_clip(ctx.db(), caller_of(ctx), r, link_video);
  return Response::json(200, {{"transcription_id", tid},
                              {"start_seconds", r.start_seconds},
                              {"end_seconds", r.end_seconds},
                              {"clip_seconds", std::round(r.clip_seconds() * 1000.0) / 1000.0},
                              {"charge_usd", money::to_usd(charge)}});
}

Response ListClipsHandler::handle(RequestContext& ctx) {
  const int64_t tid = ctx.id_param("id", "transcription");
  QueryParams q(ctx.req);
  const int64_t limit = q.integer("limit", limits::kClipListMax, 1, limits::kClipListMax);
  std::vector<std::pair<int64_t, std::string>> rows;
  {
    pqxx::read_transaction txn(ctx.db());
    if (txn.exec_prepared(kOwned.name, tid, ctx.caller().account_id).empty()) throw Error::not_found("transcription");
    for (const auto& row : txn.exec_prepared(kClips.name, tid, ctx.caller().account_id, limit))
      rows.emplace_back(row[0].as<int64_t>(), row[1].c_str());
  }
  Json data = Json::array();
  for (const auto& [id, view] : rows) data.push_back(render(ctx.db(), ctx.services, id, view));
  return Response::json(200, {{"data", data}});
}

std::string GetClipHandler::key(int64_t clip_id) { return "clip:" + std::to_string(clip_id); }

void GetClipHandler::handle(std::shared_ptr<RequestContext> ctx, Responder respond) {
  int64_t tid = 0, id = 0;
  std::optional<int64_t> wait;
  auto fail = [&](const Error& err) { respond(ctx->services.render_error(ctx->request_id, err)); };
  try {
    tid = ctx->id_param("id", "transcription");
    id = ctx->id_param("clipId", "clip");
    QueryParams q(ctx->req);
    if (q.string("wait", 32))
      wait = q.integer("wait", limits::kClipWaitMinSeconds, limits::kClipWaitMinSeconds, limits::kClipWaitMaxSeconds);
  } catch (const Error& err) {
    return fail(err);
  }
  // Answers with the clip as it is now, on the thread that calls it (the
  // request's, the wait registry's timer, or the thread that saw the clip
  // finish), with a connection of its own. One indexed read: quick enough for
  // those threads, and it needs no free request thread, so an MCP getClip
  // (whose tool waits on a request thread) cannot starve its own answer.
  auto answer = [ctx, tid, id, wait, respond](bool timed_out) {
    Response res;
    try {
      auto lease = ctx->services.pool.acquire();
      auto clip = load_clip(*lease, ctx->services, ctx->caller().account_id, tid, id);
      if (!clip) throw Error::not_found("clip");
      if (wait) (*clip)["_timed_out"] = timed_out && (*clip)["status"] == clip::kQueued;
      res = Response::json(200, *clip);
    } catch (const Error& err) {
      res = ctx->services.render_error(ctx->request_id, err);
    } catch (const std::exception& err) {
      log::error("clip read failed", {{"request_id", ctx->request_id}, {"error", err.what()}});
      res = ctx->services.render_error(ctx->request_id, Error("internal_error", "internal error; retry"));
    }
    respond(std::move(res));
  };
  ctx->release_db();
  if (!wait) return answer(false);
  // Registered before the status is read, so a completion in between is never missed.
  auto fired = std::make_shared<std::atomic<bool>>(false);
  auto once = [answer, fired](bool timed_out) {
    if (!fired->exchange(true)) answer(timed_out);
  };
  const uint64_t waiter =
      ctx->services.waits->add(key(id), WaitRegistry::Clock::now() + std::chrono::seconds(*wait), once);
  std::optional<std::string> status;
  try {
    auto lease = ctx->services.pool.acquire();
    pqxx::read_transaction txn(*lease);
    auto r = txn.exec_prepared(kClip.name, id, tid, ctx->caller().account_id);
    if (!r.empty()) status = Json::parse(r[0][0].c_str()).value("status", "");
  } catch (const std::exception& err) {
    log::error("clip read failed", {{"request_id", ctx->request_id}, {"error", err.what()}});
  }
  // Missing or finished already: answer now (a missing clip answers 404).
  if ((!status || *status != clip::kQueued) && ctx->services.waits->cancel(waiter)) once(false);
}

}  // namespace scribe::api
