// POST /api/v1/transcriptions/{id}/clips, GET .../clips/quote, GET .../clips,
// GET .../clips/{clipId} (with `wait`, a long-poll like /wait) and the signed
// file links GET /clips/files/{clipId}/{name}.
//  - A clip's options are checked in domain/clip.cpp; what needs the
//    transcription, its words and the wallet in commands/clip_commands.cpp;
//    what needs the stored media (is there audio? a video stream?) here,
//    before the command, with the database connection released for ffprobe.
//  - The links are signed with the server secret "clip_links" for an hour
//    from each read; the file route checks the signature and the expiry and
//    needs no key (the link is the authorization, as for presigned uploads).
#include <fstream>
#include <sstream>

#include "api/byte_range.h"
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

// The request's options, from a JSON body (POST) or the query (quote), one
// reader for both so the two cannot disagree.
struct Fields {
  virtual ~Fields() = default;
  virtual std::optional<double> number(const std::string& f, bool required) const = 0;
  virtual std::optional<int64_t> integer(const std::string& f) const = 0;
  virtual std::optional<std::string> string(const std::string& f, std::size_t max) const = 0;
  virtual std::optional<bool> boolean(const std::string& f) const = 0;
};

struct BodyFields final : Fields {
  explicit BodyFields(const JsonBody& b) : b(b) {}
  std::optional<double> number(const std::string& f, bool required) const override {
    return b.number(f, required, {0.0, 1e9});
  }
  std::optional<int64_t> integer(const std::string& f) const override { return b.integer(f, false); }
  std::optional<std::string> string(const std::string& f, std::size_t max) const override {
    return b.string(f, false, 0, max);
  }
  std::optional<bool> boolean(const std::string& f) const override { return b.boolean(f, false); }
  const JsonBody& b;
};

struct QueryFields final : Fields {
  explicit QueryFields(const QueryParams& q) : q(q) {}
  std::optional<double> number(const std::string& f, bool required) const override {
    auto v = q.string(f, 64);
    if (!v) {
      if (required) throw Error::invalid(f, f + " is required");
      return std::nullopt;
    }
    char* end = nullptr;
    const double d = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(d) || d < 0) throw Error::invalid(f, f + " must be a number >= 0");
    return d;
  }
  std::optional<int64_t> integer(const std::string& f) const override {
    if (!q.string(f, 64)) return std::nullopt;
    return q.integer(f, 0, -1'000'000'000, 1'000'000'000);
  }
  std::optional<std::string> string(const std::string& f, std::size_t max) const override { return q.string(f, max); }
  std::optional<bool> boolean(const std::string& f) const override {
    if (!q.string(f, 16)) return std::nullopt;
    return q.boolean(f, false);
  }
  const QueryParams& q;
};

clip::Request parse_request(const Fields& f, int64_t transcription_id, bool with_post_fields) {
  clip::Request r;
  r.transcription_id = transcription_id;
  r.start_seconds = *f.number("start_seconds", true);
  r.end_seconds = *f.number("end_seconds", true);
  if (auto v = f.string("aspect", 16)) r.aspect = *v;
  if (auto v = f.string("style", 32)) r.style = *v;
  if (auto v = f.string("output", 32)) r.output = *v;
  if (auto v = f.string("caption_position", 16)) r.caption_position = *v;
  if (auto v = f.integer("words_per_line")) {
    if (*v < limits::kClipWordsPerLineMin || *v > limits::kClipWordsPerLineMax)
      throw Error::invalid("words_per_line", "words_per_line must be an integer from 1 to 6");
    r.words_per_line = static_cast<int>(*v);
  }
  if (auto v = f.string("highlight_color", 16)) r.highlight_color = *v;
  if (auto v = f.string("framing", 16)) r.framing = *v;
  r.rights_affirmed = f.boolean("rights_affirmed").value_or(false);
  // 4 bytes per code point at most; domain/clip.cpp counts code points.
  if (auto v = f.string("title", 4 * limits::kClipTitleMaxChars + 4)) {
    if (!v->empty()) r.title = *v;
  }
  if (auto v = f.number("max_charge_usd", false)) r.max_charge = money::from_usd(*v);
  if (with_post_fields) {
    r.client_nonce = f.string("client_nonce", 64);
    r.callback_url = f.string("callback_url", limits::kCallbackUrlMaxLength);
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
  if (upload) {
    auto path = object_store().local_path(audio_key);
    ctx.release_db();  // ffprobe may take a moment
    if (!path || !media::has_video_stream(*path))
      throw Error("video_unavailable", "the uploaded file has no video; upload the original video to make a video clip",
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
  clip::Request r = parse_request(BodyFields(body), tid, true);
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
  QueryParams q(ctx.req);
  clip::Request r = parse_request(QueryFields(q), tid, false);
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

Response ClipFileHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("clipId", "clip");
  const std::string name = ctx.params.at("name");
  QueryParams q(ctx.req);
  auto expires = q.string("expires", 20);
  auto signature = q.string("signature", 128);
  auto forbidden = [] {
    return Error("forbidden", "this link is invalid or has expired; GET the clip for a fresh one");
  };
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
  std::string view_text;
  int64_t tid = 0;
  {
    pqxx::read_transaction txn(ctx.db());
    auto r = txn.exec_prepared(kById.name, id);
    if (r.empty()) throw Error::not_found("clip");
    tid = r[0][0].as<int64_t>();
    view_text = r[0][1].c_str();
  }
  ctx.release_db();
  const Json view = Json::parse(view_text);
  const Json& file = view.contains("file") ? view.at("file") : Json(nullptr);
  if (!file.is_object() || (name != "clip.srt" && file.value("name", "") != name)) throw Error::not_found("clip file");
  auto path = object_store().local_path(clip::file_key(tid, id, name));
  std::ifstream in(path.value_or(""), std::ios::binary | std::ios::ate);
  if (!path || !in) throw Error::not_found("clip file");
  const auto size = static_cast<uint64_t>(in.tellg());
  Response res;
  res.status = 200;
  res.content_type = name == "clip.srt" ? "application/x-subrip; charset=utf-8" : file.value("content_type", "");
  res.set_header("Accept-Ranges", "bytes");
  res.set_header("Content-Disposition", "inline; filename=\"clip-" + std::to_string(id) + name.substr(4) + "\"");
  res.set_header("Cache-Control", "private, max-age=3600");
  // Players seek in an MP4 with Range requests (one range; anything else
  // gets the whole file, as the RFC allows).
  ByteRange range{0, size ? size - 1 : 0};
  switch (ctx.req.header("range") ? parse_byte_range(*ctx.req.header("range"), size, range) : RangeAnswer::Whole) {
    case RangeAnswer::Unsatisfiable: {
      Response refused = ctx.services.render_error(
          ctx.request_id, Error("invalid_request", "the range starts past the end of the file", {{"size", size}}));
      refused.status = 416;
      refused.set_header("Content-Range", "bytes */" + std::to_string(size));
      return refused;
    }
    case RangeAnswer::Partial:
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
                                          std::to_string(size));
      break;
    case RangeAnswer::Whole:
      break;
  }
  const uint64_t length = size ? range.last - range.first + 1 : 0;
  res.body.resize(length);
  in.seekg(static_cast<std::streamoff>(range.first));
  if (length && !in.read(res.body.data(), static_cast<std::streamsize>(length)))
    throw Error("internal_error", "the clip file could not be read");
  return res;
}

}  // namespace scribe::api
