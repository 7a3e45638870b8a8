// POST /api/v1/uploads (presigned one-shot ticket), PUT
// /uploads/presigned/{upload_id} (the presigned URL itself, served by this
// service) and POST /api/v1/uploads/tus (resumable ticket; the tus server is
// in tus_handlers.cpp).
//
// Decisions (also in api/openapi.yaml):
//  - The presigned URL is {public_url}/uploads/presigned/<upl_id>?expires=<unix>&signature=<hex>,
//    signed as described in domain/upload.h. It needs no Authorization header.
//  - Every reason the URL no longer authorizes a PUT is 403 forbidden, with
//    error.reason: bad_signature (also unknown ids), expired (after 900 s),
//    already_used (single use: a second PUT after a successful one).
//  - content_type is case-insensitive and its parameters (";charset=...")
//    are dropped: the ticket keeps the lower-case media type.
//  - Content-Type other than the ticket's (compared the same way) is 400
//    naming content_type; a
//    missing or different Content-Length is 400 naming content_length, or 413
//    when it is larger than the ticket's file_size.
#include <filesystem>

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

constexpr const char* kPresignedSecret = "upload_url";
constexpr const char* kTicketSecret = "upload_token";

Error refused(const std::string& reason, const std::string& message) {
  return Error("forbidden", message, {{"reason", reason}});
}

// Checks the query string's signature and the URL's life against the row;
// returns the row of an upload that may still be PUT.
uploads::Row authorize_put(RequestContext& ctx) {
  const std::string& id = ctx.params.at("upload_id");
  auto expires = upload::parse_length(ctx.req.query_param("expires").value_or(""));
  auto signature = ctx.req.query_param("signature").value_or("");
  auto row = uploads::load(ctx.db(), id);
  if (!expires || signature.empty() || !row || row->kind != "presigned" || !row->content_type)
    throw refused("bad_signature", "the upload URL is not valid; request a new one with POST /api/v1/uploads");
  upload::PresignedFields f{id, *row->content_type, row->declared_size, *expires, row->account_id};
  if (!upload::verify_presigned(secrets::get(ctx.db(), kPresignedSecret), f, signature))
    throw refused("bad_signature",
                  "the upload URL signature does not match; request a new one with POST /api/v1/uploads");
  if (row->completed)
    throw refused("already_used", "this upload URL was already used; each presigned URL takes one PUT");
  if (*expires < uploads::unix_now())
    throw refused("expired", "the upload URL expired; request a new one with POST /api/v1/uploads");
  return *row;
}

}  // namespace

Response CreateUploadHandler::handle(RequestContext& ctx) {
  auto b = JsonBody::parse(ctx.req);
  auto filename = b.string("filename", true, 1, 255);
  auto given = b.string("content_type", true, 1, 100);
  if (!upload::is_allowed_content_type(*given))
    throw Error::invalid("content_type", "content_type must be one of " +
                                             std::string(upload::allowed_content_types_text()) +
                                             " (any case; parameters are ignored)");
  // Stored, signed and echoed as the bare lower-case media type, which the
  // PUT's Content-Type is compared with the same way.
  const std::optional<std::string> content_type = upload::media_type(*given);
  auto size = b.integer("file_size", true, {1.0, static_cast<double>(limits::kMaxUploadBytes)});
  uploads::Row row;
  row.id = "upl_" + crypto::random_alnum(24);
  row.account_id = ctx.caller().account_id;
  row.kind = "presigned";
  row.filename = filename;
  row.content_type = content_type;
  row.declared_size = *size;
  row.expires_unix = uploads::unix_now() + limits::kPresignedUploadTtlSeconds;
  uploads::insert(ctx.db(), row);
  upload::PresignedFields f{row.id, *content_type, *size, row.expires_unix, row.account_id};
  std::string url = ctx.services.config.public_url + "/uploads/presigned/" + row.id +
                    "?expires=" + std::to_string(row.expires_unix) +
                    "&signature=" + upload::presigned_signature(secrets::get(ctx.db(), kPresignedSecret), f);
  return Response::json(
      200, {{"upload_id", row.id}, {"upload_url", url}, {"expires_in", limits::kPresignedUploadTtlSeconds}});
}

StreamPlan PutPresignedUploadHandler::precheck(RequestContext& ctx) {
  auto row = authorize_put(ctx);
  auto type = ctx.req.header("content-type");
  if (!type || upload::media_type(*type) != upload::media_type(*row.content_type))
    throw Error::invalid("content_type",
                         "Content-Type must be " + *row.content_type + ", as given to POST /api/v1/uploads");
  auto length = upload::parse_length(ctx.req.header("content-length").value_or(""));
  if (length && *length > row.declared_size)
    throw Error("invalid_request",
                "the body is larger than the ticket's file_size of " + std::to_string(row.declared_size) + " bytes",
                {{"field", "content_length"}}, 413);
  if (!length || *length != row.declared_size)
    throw Error::invalid("content_length", "Content-Length must be given and equal the ticket's file_size of " +
                                               std::to_string(row.declared_size) + " bytes");
  StreamPlan plan;
  plan.file = uploads::staging_dir() + "/presigned/" + row.id + "." + crypto::random_hex(6);
  plan.max_bytes = row.declared_size;
  return plan;
}

Response PutPresignedUploadHandler::handle(RequestContext& ctx) {
  const std::string& file = ctx.req.body_file;
  struct Cleanup {
    const std::string& path;
    ~Cleanup() {
      std::error_code ec;
      if (!path.empty()) fs::remove(path, ec);
    }
  } cleanup{file};
  // Only the streaming path sets body_file; anything else never passed the precheck.
  if (file.empty()) throw refused("bad_signature", "the upload URL is not valid");
  const std::string& id = ctx.params.at("upload_id");
  auto row = uploads::load(ctx.db(), id);
  if (!row) throw refused("bad_signature", "the upload URL is not valid");
  if (ctx.req.body_state == "failed") throw Error("internal_error", "cannot store the upload now; retry");
  if (ctx.req.body_state == "too_large")
    throw Error("invalid_request",
                "the body is larger than the ticket's file_size of " + std::to_string(row->declared_size) + " bytes",
                {{"field", "content_length"}}, 413);
  if (ctx.req.body_state != "complete" || ctx.req.body_bytes != row->declared_size)
    throw Error::invalid("content_length", "the body ended after " + std::to_string(ctx.req.body_bytes) + " of " +
                                               std::to_string(row->declared_size) + " bytes");
  // Claim first, so two racing PUTs cannot both land; the loser is refused.
  if (!uploads::mark_completed(ctx.db(), id, ctx.req.body_bytes))
    throw refused("already_used", "this upload URL was already used; each presigned URL takes one PUT");
  try {
    object_store().put_file(uploads::object_key(id), file);
  } catch (...) {
    uploads::mark_incomplete(ctx.db(), id);
    throw;
  }
  return Response::json(200, {{"upload_id", id},
                              {"file_size", row->declared_size},
                              {"content_type", *row->content_type},
                              {"completed", true}});
}

Response CreateTusTicketHandler::handle(RequestContext& ctx) {
  auto b = JsonBody::parse(ctx.req);
  b.string("filename", true, 1, 255);
  auto size = b.integer("file_size", true, {1.0, static_cast<double>(limits::kMaxUploadBytes)});
  upload::Ticket t{ctx.caller().account_id, *size, uploads::unix_now() + limits::kResumableTicketTtlSeconds};
  return Response::json(200, {{"upload_endpoint", ctx.services.config.public_url + "/api/v1/uploads/tus/files"},
                              {"upload_token", upload::make_ticket(secrets::get(ctx.db(), kTicketSecret), t)},
                              {"upload_metadata_key", "upload_token"},
                              {"expires_in", limits::kResumableTicketTtlSeconds},
                              {"max_file_size", limits::kMaxUploadBytes}});
}

}  // namespace scribe::api
