// POST /v1/audio/transcriptions: OpenAI's speech-to-text request on this
// service's commands, wallet and pipeline.
//
// Decisions (also in api/openapi.yaml; wire rules in docs/openai_compat_notes.md):
//  - The body streams through FormUpload: the file part goes to a staging
//    file and is hashed (SHA-256) as it arrives, next to an `uploads` row made
//    by the precheck, so a staging file of a request that never finished is
//    swept like an unfinished presigned upload. Nothing is kept in memory
//    but the small fields.
//  - The request is a transcription of source `upload` exactly as POST
//    /api/v1/transcriptions makes one (measured by ffprobe, quoted, held,
//    charged and settled by commands::create and the workers).
//  - Charged once across retries. With an Idempotency-Key, the key is claimed
//    with the fingerprint of transcription_form.h (the parsed fields that
//    shape the transcription plus the file's SHA-256), not the body's bytes,
//    which differ on every try. Without one, the same fingerprint is claimed
//    under the key's dedupe identity: a repeat while the first runs, or up to
//    SCRIBE_OPENAI_DEDUPE_SECONDS after it finished, is answered by the
//    first transcription. What is stored is a pointer to the transcription,
//    never its text: a repeat renders the transcription as it is now (gone
//    once deleted) in the format it asks for.
//  - The answer waits for the transcription without a thread
//    (transcription_answer.cpp). A client that goes away loses nothing: the
//    transcription runs, is charged as usual and is in /api/v1.
#include <filesystem>

#include "api/caller.h"
#include "api/idempotency.h"
#include "api/openai/answer.h"
#include "api/openai/form_upload.h"
#include "api/openai/handlers.h"
#include "api/openai/transcription_form.h"
#include "api/services.h"
#include "api/upload_store.h"
#include "commands/transcription_commands.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/log.h"
#include "common/object_store.h"
#include "common/text.h"
#include "domain/limits.h"
#include "domain/transcription.h"
#include "domain/upload.h"

namespace scribe::api::openai {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPath = "/v1/audio/transcriptions";
// What an idempotency entry of this route stores on success: the
// transcription's id, never its text.
constexpr const char* kPointerType = "application/vnd.scribe.openai-transcription+json";

const db::Statement kFinishedAge{"openai.finished_age",
                                 "select status, extract(epoch from (now() - updated_at))::float8 "
                                 "from transcriptions where id = $1 and account_id = $2"};

// The form of one request, with the upload row its precheck made.
class StagedForm : public FormUpload {
 public:
  StagedForm(std::string boundary, std::string path, std::string upload_id)
      : FormUpload(std::move(boundary), std::move(path), limits::kMaxUploadBytes), upload_id(std::move(upload_id)) {}
  const std::string upload_id;
};

// Removes what the request staged (file, row, stored object) unless it
// became the upload of the transcription it created.
struct Staged {
  Staged(std::shared_ptr<StagedForm> f, Services& s) : form(std::move(f)), services(s) {}
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;
  std::shared_ptr<StagedForm> form;
  Services& services;
  bool kept = false;
  ~Staged() { discard(); }
  // Called before a refusal is sent, so a client that reads it finds nothing left.
  void discard() {
    if (!form || kept) return;
    kept = true;  // once
    std::error_code ec;
    fs::remove(form->file_path(), ec);
    try {
      object_store().remove_prefix(uploads::object_key(form->upload_id));
      auto lease = services.pool.acquire();
      uploads::remove(*lease, form->upload_id);
    } catch (const std::exception& e) {
      log::warn("could not remove a staged upload", {{"upload_id", form->upload_id}, {"error", e.what()}});
    }
  }
};

Response pointer(int64_t id) {
  Response r;
  r.status = 200;
  r.content_type = kPointerType;
  r.body = Json{{"transcription_id", id}}.dump();
  return r;
}

std::optional<int64_t> pointer_id(const Response& r) {
  if (r.content_type != kPointerType) return std::nullopt;
  Json j = Json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("transcription_id") || !j["transcription_id"].is_number_integer())
    return std::nullopt;
  return j["transcription_id"].get<int64_t>();
}

// How the request is answered after the claim.
struct Claim {
  std::string principal{};  // the claimed entry, to finish or release; empty when none
  std::string key{};
  bool keyed = false;
  std::optional<int64_t> existing{};  // an earlier transcription answers it
  std::optional<Response> replay{};   // a stored refusal answers it
};

// Whether transcription `id` still answers a repeat that came without a key.
bool still_answers(RequestContext& ctx, int64_t id) {
  pqxx::read_transaction txn(ctx.db());
  auto r = txn.exec_prepared(kFinishedAge.name, id, ctx.caller().account_id);
  if (r.empty()) return false;  // deleted
  if (!transcription::is_terminal(r[0][0].c_str())) return true;
  return r[0][1].as<double>() <= ctx.services.config.openai_dedupe_seconds;
}

Claim claim(RequestContext& ctx, const std::string& fp) {
  const std::string principal = ctx.caller().idempotency_principal();
  if (auto key = ctx.req.header("idempotency-key")) {
    auto outcome = Idempotency::begin_fingerprinted(ctx.db(), principal, *key, "POST", kPath, fp);
    if (auto* r = std::get_if<Response>(&outcome)) {
      if (auto id = pointer_id(*r)) return Claim{.existing = id};
      return Claim{.replay = std::move(*r)};
    }
    return Claim{.principal = principal, .key = *key, .keyed = true};
  }
  // The dedupe entries live beside the key's own Idempotency-Keys, under an
  // identity no client key can name.
  const std::string dedupe = principal + "/openai-dedupe";
  for (int attempt = 0; attempt < 3; ++attempt) {
    Idempotency::Outcome outcome;
    try {
      outcome = Idempotency::begin_fingerprinted(ctx.db(), dedupe, fp, "POST", kPath, fp);
    } catch (const Error& e) {
      if (e.code() != "not_ready") throw;
      throw Error("not_ready",
                  "another request of this API key is sending the same file; retry in a moment and it is answered "
                  "by the same transcription",
                  {{"retry_after", 1}, {"reason", "same_upload_in_flight"}});
    }
    auto* r = std::get_if<Response>(&outcome);
    if (!r) return Claim{.principal = dedupe, .key = fp};
    auto id = pointer_id(*r);
    if (id && still_answers(ctx, *id)) return Claim{.existing = id};
    // Past the window (or deleted): the entry goes and the request is new.
    Idempotency::forget(ctx.db(), dedupe, fp, r->body);
  }
  throw Error("internal_error", "could not claim the request; retry");
}

// A refusal of a claimed request: kept for replay under a client's key (as
// any 4xx of a POST), released under the dedupe identity (the next try, after
// a top-up say, must be free to succeed).
void settle_refusal(RequestContext& ctx, const Claim& c, const Response& refusal) {
  try {
    if (c.keyed) Idempotency::finish(ctx.db(), c.principal, c.key, refusal);
    else Idempotency::release(ctx.db(), c.principal, c.key);
  } catch (const std::exception& e) {
    log::error("could not settle the idempotency entry", {{"request_id", ctx.request_id}, {"error", e.what()}});
  }
}

void check_body(const Request& req, FormUpload& form) {
  auto err = form.finish();
  if (req.body_state == "too_large")
    throw Error(
        "invalid_request",
        "the request body is larger than the upload limit of " + std::to_string(limits::kMaxUploadBytes) + " bytes",
        {{"field", "file"}}, 413);
  if (err) throw *err;
  if (req.body_state == "failed") throw Error("internal_error", "cannot store the upload now; retry");
  if (req.body_state != "complete") throw Error::invalid("file", "the request body ended early");
}

void check_file(const FormUpload& form) {
  if (!form.has_file()) throw Error::invalid("file", "file is required: the audio as a multipart part named file");
  if (form.file_bytes() == 0) throw Error::invalid("file", "file is empty");
  if (!upload_media_type(form.file_content_type(), form.filename()) &&
      !type_left_to_probe(form.file_content_type(), form.filename()))
    throw Error::invalid("file",
                         "the file's type is not one this service transcribes; send flac, mp3, mp4, mpeg, "
                         "mpga, m4a, ogg, wav or webm (a file name with its extension, or " +
                             std::string(upload::allowed_content_types_text()) + ")");
}

// The upload becomes a stored upload and the transcription is created, as
// POST /api/v1/transcriptions does with source upload.
int64_t create(RequestContext& ctx, StagedForm& form, const TranscriptionForm& f) {
  transcription::Request r;
  r.source = "upload";
  r.upload_id = form.upload_id;
  const std::string& name = form.filename();
  if (!name.empty() && name.size() <= 255 && is_valid_utf8(name)) r.original_filename = name;
  r.title = r.original_filename;
  r.language = f.language;
  r.pipeline_code = f.pipeline_code;
  r.duration_seconds = 1;  // the rules that do not depend on it, before any work
  transcription::check_request(r);
  if (!uploads::mark_completed(ctx.db(), form.upload_id, form.file_bytes()))
    throw Error("internal_error", "the upload could not be recorded; retry");
  object_store().put_file(uploads::object_key(form.upload_id), form.file_path());
  ctx.release_db();  // ffprobe may take a moment
  try {
    r.duration_seconds = ctx.services.probe_upload(form.upload_id).duration_seconds;
  } catch (const Error& e) {
    if (e.http_status() == 400)
      throw Error::invalid("file", "the file is not audio or video this service can read: " + e.message());
    throw;
  }
  try {
    return commands::create(ctx.services.store, ctx.db(), caller_of(ctx), r).transcription_id;
  } catch (const Error& e) {
    // The plan's cap on a file's length speaks of the length it measured;
    // these clients sent a file, not a duration.
    if (e.extras().value("field", "") != "duration_seconds") throw;
    Json extras = e.extras();
    extras["field"] = "file";
    throw Error(e.code(), e.message(), extras, e.http_status());
  }
}

}  // namespace

StreamPlan TranscriptionsHandler::precheck(RequestContext& ctx) {
  // The key, rate limit and scope were checked on this head (ApiApp::add_stream).
  auto boundary = form_data_boundary(ctx.req.header("content-type").value_or(""));
  if (!boundary)
    throw Error("invalid_request",
                "the body must be multipart/form-data with a boundary, the file in a part named file",
                {{"field", "file"}}, 415);
  const int64_t limit = limits::kMaxUploadBytes + limits::kMaxMultipartOverheadBytes;
  auto length = upload::parse_length(ctx.req.header("content-length").value_or(""));
  if (length && *length > limit)
    throw Error(
        "invalid_request",
        "the request body is larger than the upload limit of " + std::to_string(limits::kMaxUploadBytes) + " bytes",
        {{"field", "file"}}, 413);
  uploads::Row row;
  row.id = "upl_" + crypto::random_alnum(24);
  row.account_id = ctx.caller().account_id;
  row.kind = "presigned";  // served by no URL: its signature was never issued
  row.declared_size = length.value_or(0);
  row.expires_unix = uploads::unix_now() + limits::kOpenAiStagingTtlSeconds;
  uploads::insert(ctx.db(), row);
  // Named as presigned staging files are, so the sweep finds it.
  const std::string path = uploads::staging_dir() + "/presigned/" + row.id + "." + crypto::random_hex(6);
  StreamPlan plan;
  plan.file = path;
  plan.max_bytes = limit;
  plan.sink = std::make_shared<StagedForm>(*boundary, path, row.id);
  return plan;
}

void TranscriptionsHandler::handle(std::shared_ptr<RequestContext> ctx, Responder respond) {
  auto form = std::dynamic_pointer_cast<StagedForm>(ctx->req.body_sink);
  Staged staged(form, ctx->services);
  TranscriptionForm f;
  int64_t id = 0;
  try {
    // A request that reached the route without the stream (an internal call).
    if (!form)
      throw Error("invalid_request", "the body must be multipart/form-data, the file in a part named file",
                  {{"field", "file"}}, 415);
    check_body(ctx->req, *form);
    f = parse_form(form->fields());
    check_file(*form);
    Claim c = claim(*ctx, fingerprint(f, form->filename(), form->file_bytes(), form->file_sha256()));
    if (c.replay) {
      ctx->release_db();
      staged.discard();
      return respond(std::move(*c.replay));
    }
    if (c.existing) {
      id = *c.existing;
    } else {
      try {
        id = create(*ctx, *form, f);
        staged.kept = true;
      } catch (const Error& e) {
        settle_refusal(*ctx, c, ctx->services.render_error(ctx->request_id, e));
        throw;
      } catch (...) {
        settle_refusal(*ctx, Claim{.principal = c.principal, .key = c.key}, Response{});
        throw;
      }
      try {
        Idempotency::finish(ctx->db(), c.principal, c.key, pointer(id));
      } catch (const std::exception& e) {
        // The transcription exists and is answered; only a retry's shortcut is lost.
        log::error("could not store the idempotent answer",
                   {{"request_id", ctx->request_id}, {"transcription_id", id}, {"error", e.what()}});
      }
    }
  } catch (const Error& e) {
    if (e.http_status() >= 500)
      log::error("request failed", {{"request_id", ctx->request_id}, {"code", e.code()}, {"error", e.message()}});
    ctx->release_db();
    staged.discard();
    return respond(ctx->services.render_error(ctx->request_id, e));
  } catch (const std::exception& e) {
    log::error("unhandled error", {{"request_id", ctx->request_id}, {"error", e.what()}});
    ctx->release_db();
    staged.discard();
    return respond(ctx->services.render_error(ctx->request_id, Error("internal_error", "internal error; retry")));
  }
  ctx->release_db();
  staged.discard();  // an earlier transcription answers: this upload is not needed
  answer_when_done(ctx, id, f, std::move(respond));
}

}  // namespace scribe::api::openai
