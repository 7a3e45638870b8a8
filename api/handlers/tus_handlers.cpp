// The tus 1.0 server at /api/v1/uploads/tus/files: core protocol (HEAD,
// PATCH), creation (POST), termination (DELETE) and expiration
// (Upload-Expires). OPTIONS is answered by the CORS preflight in api_app.cpp,
// which adds the Tus-* discovery headers on this path.
//
// Decisions (also in api/openapi.yaml):
//  - Creation takes the ticket of POST /api/v1/uploads/tus in Upload-Metadata
//    (key upload_token). Missing: 400; bad signature or expired: 403 forbidden.
//    A ticket may create several uploads until it expires (3600 s), each bound
//    to its account and at most its file_size (larger Upload-Length: 413).
//  - The Location is <endpoint>/<id>+<resume token>; the resume token (only
//    its SHA-256 is stored, compared in constant time) authorizes HEAD, PATCH
//    and DELETE. A wrong token is 404, like an unknown id.
//  - An unfinished upload may be resumed for 24 hours (Upload-Expires), then
//    it is 404. Creation without data: a POST body is not read.
//  - One PATCH at a time per upload (409 otherwise); an interrupted PATCH
//    keeps the bytes that arrived, as the tus resume model expects.
//  - A PATCH whose body goes past Upload-Length (by its Content-Length, or
//    by the bytes of a chunked body) is 413 and keeps nothing of its body:
//    Upload-Offset stays where it was.
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "api/handlers/handlers.h"
#include "api/params.h"
#include "api/services.h"
#include "api/upload_store.h"
#include "common/crypto.h"
#include "common/error.h"
#include "common/object_store.h"
#include "common/secrets.h"
#include "domain/limits.h"
#include "domain/upload.h"

namespace scribe::api {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTicketSecret = "upload_token";
constexpr const char* kOffsetContentType = "application/offset+octet-stream";

// Uploads with a PATCH in progress in this process.
std::mutex g_patching_mu;
std::set<std::string> g_patching;

void release(const std::string& id) {
  std::lock_guard lock(g_patching_mu);
  g_patching.erase(id);
}

Response tus_response(int status) {
  Response r;
  r.status = status;
  r.content_type.clear();
  r.set_header("Tus-Resumable", "1.0.0");
  return r;
}

void require_tus_resumable(const RequestContext& ctx) {
  if (ctx.req.header("tus-resumable").value_or("") != "1.0.0")
    throw Error("invalid_request", "the Tus-Resumable: 1.0.0 header is required", {{"field", "Tus-Resumable"}}, 412);
}

// Renders errors in the envelope with the headers every tus answer carries.
Response tus_errors(RequestContext& ctx, const std::function<Response()>& body) {
  try {
    return body();
  } catch (const Error& err) {
    Response r = ctx.services.render_error(ctx.request_id, err);
    r.set_header("Tus-Resumable", "1.0.0");
    if (err.http_status() == 412) r.set_header("Tus-Version", "1.0.0");
    return r;
  }
}

// The upload named by the path's "<id>+<token>"; 404 when unknown, the token
// is wrong, or the unfinished upload expired.
uploads::Row locate(RequestContext& ctx) {
  auto loc = upload::parse_tus_locator(ctx.params.at("upload"));
  if (!loc) throw Error::not_found("upload");
  auto row = uploads::load(ctx.db(), "tus/" + loc->id);
  if (!row || row->kind != "tus" || !row->resume_token_hash ||
      !crypto::constant_time_equal(*row->resume_token_hash, crypto::sha256_hex(loc->token)))
    throw Error::not_found("upload");
  if (!row->completed && row->expires_unix < uploads::unix_now())
    throw Error("not_found", "upload expired; create a new one");
  return *row;
}

std::string short_id(const uploads::Row& row) { return row.id.substr(4); }

void set_offsets(Response& r, const uploads::Row& row, int64_t offset) {
  r.set_header("Upload-Offset", std::to_string(offset));
  r.set_header("Upload-Length", std::to_string(row.declared_size));
  if (!row.completed) r.set_header("Upload-Expires", upload::http_date(row.expires_unix));
}

// Moves a fully received file into the object store, once.
void complete(RequestContext& ctx, const uploads::Row& row) {
  if (!uploads::mark_completed(ctx.db(), row.id, row.declared_size)) return;
  try {
    object_store().put_file(uploads::object_key(row.id), uploads::tus_staging_file(short_id(row)));
  } catch (...) {
    uploads::mark_incomplete(ctx.db(), row.id);
    throw;
  }
}

}  // namespace

Response TusCreateHandler::handle(RequestContext& ctx) {
  return tus_errors(ctx, [&] {
    require_tus_resumable(ctx);
    if (ctx.req.header("upload-defer-length"))
      throw Error::invalid("Upload-Defer-Length", "Upload-Defer-Length is not supported; send Upload-Length");
    auto length = upload::parse_length(ctx.req.header("upload-length").value_or(""));
    if (!length) throw Error::invalid("Upload-Length", "Upload-Length must be a non-negative integer");
    auto meta = upload::parse_upload_metadata(ctx.req.header("upload-metadata").value_or(""));
    if (!meta) throw Error::invalid("Upload-Metadata", "Upload-Metadata must be comma-separated 'key base64' pairs");
    auto token = meta->find("upload_token");
    if (token == meta->end())
      throw Error::invalid("upload_token", "Upload-Metadata must carry upload_token from POST /api/v1/uploads/tus");
    auto ticket = upload::verify_ticket(secrets::get(ctx.db(), kTicketSecret), token->second);
    if (!ticket)
      throw Error("forbidden", "upload_token is not valid; request one with POST /api/v1/uploads/tus",
                  {{"reason", "bad_signature"}});
    if (ticket->expires_unix < uploads::unix_now())
      throw Error("forbidden", "upload_token expired; request a new one with POST /api/v1/uploads/tus",
                  {{"reason", "expired"}});
    int64_t bound = std::min<int64_t>(ticket->file_size, limits::kMaxUploadBytes);
    if (*length > bound)
      throw Error("invalid_request",
                  "Upload-Length " + std::to_string(*length) + " is larger than the ticket's " + std::to_string(bound) +
                      " bytes",
                  {{"field", "Upload-Length"}}, 413);
    uploads::Row row;
    std::string id = crypto::random_alnum(24), resume = crypto::random_alnum(32);
    row.id = "tus/" + id;
    row.account_id = ticket->account_id;
    row.kind = "tus";
    if (auto f = meta->find("filename"); f != meta->end() && !f->second.empty() && f->second.size() <= 255 &&
                                         is_valid_utf8(f->second) && f->second.find('\0') == std::string::npos)
      row.filename = f->second;
    row.declared_size = *length;
    row.resume_token_hash = crypto::sha256_hex(resume);
    row.expires_unix = uploads::unix_now() + limits::kResumableUploadTtlSeconds;
    { std::ofstream(uploads::tus_staging_file(id), std::ios::binary | std::ios::trunc); }
    uploads::insert(ctx.db(), row);
    if (*length == 0) complete(ctx, row);
    Response r = tus_response(201);
    r.set_header("Location", ctx.services.config.public_url + "/api/v1/uploads/tus/files/" + id + "+" + resume);
    if (*length > 0) r.set_header("Upload-Expires", upload::http_date(row.expires_unix));
    r.set_header("Upload-Offset", "0");
    return r;
  });
}

Response TusHeadHandler::handle(RequestContext& ctx) {
  return tus_errors(ctx, [&] {
    require_tus_resumable(ctx);
    auto row = locate(ctx);
    Response r = tus_response(200);
    set_offsets(r, row, row.received_bytes);
    r.set_header("Cache-Control", "no-store");
    return r;
  });
}

StreamPlan TusPatchHandler::precheck(RequestContext& ctx) {
  StreamPlan plan;
  Response rejected = tus_errors(ctx, [&] {
    require_tus_resumable(ctx);
    // Compared as a std::string: g++ 12 misreads a comparison of an
    // optional's value_or("") with a char array as an over-read. The media
    // type is case-insensitive and parameters do not change it.
    const std::string content_type = upload::media_type(ctx.req.header("content-type").value_or(std::string()));
    if (content_type != std::string(kOffsetContentType))
      throw Error("invalid_request", std::string("PATCH needs Content-Type: ") + kOffsetContentType,
                  {{"field", "Content-Type"}}, 415);
    auto row = locate(ctx);
    auto offset = upload::parse_length(ctx.req.header("upload-offset").value_or(""));
    if (!offset) throw Error::invalid("Upload-Offset", "Upload-Offset must be a non-negative integer");
    if (*offset != row.received_bytes)
      throw Error("invalid_request",
                  "Upload-Offset " + std::to_string(*offset) + " does not match the server's " +
                      std::to_string(row.received_bytes) + "; HEAD the upload and resume from there",
                  {{"field", "Upload-Offset"}}, 409);
    auto length = upload::parse_length(ctx.req.header("content-length").value_or(""));
    if (length && *length > row.declared_size - row.received_bytes)
      throw Error("invalid_request", "the body goes past Upload-Length " + std::to_string(row.declared_size),
                  {{"field", "Content-Length"}}, 413);
    {
      std::lock_guard lock(g_patching_mu);
      if (!g_patching.insert(row.id).second)
        throw Error("invalid_request", "another PATCH of this upload is in progress", {{"field", "Upload-Offset"}},
                    409);
    }
    // Bytes past the recorded offset (a crash between write and update) are dropped.
    std::string file = uploads::tus_staging_file(short_id(row));
    std::error_code ec;
    if (!fs::exists(file)) std::ofstream(file, std::ios::binary);
    fs::resize_file(file, static_cast<std::uintmax_t>(row.received_bytes), ec);
    plan.file = file;
    plan.append = true;
    plan.max_bytes = row.declared_size - row.received_bytes;
    return Response{};
  });
  if (plan.file.empty()) plan.reject = std::move(rejected);
  return plan;
}

Response TusPatchHandler::handle(RequestContext& ctx) {
  auto loc = upload::parse_tus_locator(ctx.params.at("upload"));
  struct Release {
    std::string id;
    ~Release() {
      if (!id.empty()) release(id);
    }
  } guard{ctx.req.body_file.empty() || !loc ? "" : "tus/" + loc->id};
  return tus_errors(ctx, [&] {
    // Only the streaming path sets body_file; anything else never passed the precheck.
    if (ctx.req.body_file.empty()) throw Error::not_found("upload");
    auto row = locate(ctx);
    std::error_code ec;
    if (ctx.req.body_state == "too_large") {
      // All or nothing: a body that goes past Upload-Length is refused whole
      // (tus 1.0 lets a server reject it), so the offset stays where it was.
      fs::resize_file(ctx.req.body_file, static_cast<std::uintmax_t>(row.received_bytes), ec);
      throw Error("invalid_request",
                  "the body goes past Upload-Length " + std::to_string(row.declared_size) +
                      "; nothing of it was kept, the offset is still " + std::to_string(row.received_bytes),
                  {{"field", "Content-Length"}}, 413);
    }
    auto size = fs::file_size(ctx.req.body_file, ec);
    int64_t offset = ec ? row.received_bytes : std::min<int64_t>(static_cast<int64_t>(size), row.declared_size);
    if (offset == row.declared_size) {
      complete(ctx, row);
      row.completed = true;
    } else {
      uploads::set_received(ctx.db(), row.id, offset);
    }
    if (ctx.req.body_state == "failed") throw Error("internal_error", "cannot store the upload now; retry");
    Response r = tus_response(204);
    set_offsets(r, row, offset);
    return r;
  });
}

Response TusDeleteHandler::handle(RequestContext& ctx) {
  return tus_errors(ctx, [&] {
    require_tus_resumable(ctx);
    auto row = locate(ctx);
    uploads::remove(ctx.db(), row.id);
    std::error_code ec;
    fs::remove(uploads::tus_staging_file(short_id(row)), ec);
    object_store().remove_prefix(uploads::object_key(row.id));
    return tus_response(204);
  });
}

}  // namespace scribe::api
