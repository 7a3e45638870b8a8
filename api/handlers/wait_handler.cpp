// GET /api/v1/transcriptions/{id}/wait: a long-poll that holds no thread and
// no database connection while it waits. The waiter is registered first and
// the status read second, so a completion that commits in between is never
// missed: either the read sees it or the notification fires the waiter.
#include "api/handlers/handlers.h"
#include "api/params.h"
#include "api/result_view.h"
#include "api/services.h"
#include "api/wait_registry.h"
#include "common/error.h"
#include "common/log.h"
#include "common/thread_pool.h"
#include "domain/limits.h"
#include "domain/transcription.h"

namespace scribe::api {
namespace {

// Builds the body on a worker thread with a fresh connection lease.
void respond_with_result(std::shared_ptr<RequestContext> ctx, int64_t id, ResultOptions opts, bool timed_out,
                         Responder respond) {
  ctx->services.workers->post([ctx, id, opts = std::move(opts), timed_out, respond] {
    Response res;
    try {
      // A connection of its own: the completion can fire while handle() is
      // still reading on the request's connection on another thread.
      std::optional<Json> body;
      {
        auto lease = ctx->services.pool.acquire();
        pqxx::read_transaction txn(*lease);
        body = result_body(txn, ctx->caller().account_id, id, opts);
      }
      if (!body) throw Error::not_found("transcription");
      (*body)["_timed_out"] = timed_out && !transcription::is_terminal((*body)["status"].get<std::string>());
      res = Response::json(200, *body);
    } catch (const Error& err) {
      res = ctx->services.render_error(ctx->request_id, err);
    } catch (const std::exception& err) {
      log::error("wait failed", {{"request_id", ctx->request_id}, {"error", err.what()}});
      res = ctx->services.render_error(ctx->request_id, Error("internal_error", "internal error; retry"));
    }
    respond(std::move(res));
  });
}

}  // namespace

std::string WaitHandler::key(int64_t transcription_id) { return "transcription:" + std::to_string(transcription_id); }

void WaitHandler::handle(std::shared_ptr<RequestContext> ctx, Responder respond) {
  int64_t id = 0;
  ResultOptions opts;
  int64_t timeout = limits::kWaitTimeoutDefaultSeconds;
  std::string status;
  try {
    id = ctx->id_param("id", "transcription");
    QueryParams q(ctx->req);
    timeout = q.clamped_integer("timeout", limits::kWaitTimeoutDefaultSeconds, limits::kWaitTimeoutMinSeconds,
                                limits::kWaitTimeoutMaxSeconds);
    opts = parse_result_options(q, {});
    opts.content_only_when_completed = true;
    opts.public_url = ctx->services.config.public_url;
  } catch (const Error& err) {
    respond(ctx->services.render_error(ctx->request_id, err));
    return;
  }
  // Register before reading, so nothing can slip between the two.
  auto fired = std::make_shared<std::atomic<bool>>(false);
  auto once = [ctx, id, opts, respond, fired](bool timed_out) {
    if (fired->exchange(true)) return;
    respond_with_result(ctx, id, opts, timed_out, respond);
  };
  uint64_t waiter = ctx->services.waits->add(key(id), WaitRegistry::Clock::now() + std::chrono::seconds(timeout), once);
  try {
    pqxx::read_transaction txn(ctx->db());
    auto body = result_body(txn, ctx->caller().account_id, id, {});
    if (!body) throw Error::not_found("transcription");
    status = (*body)["status"].get<std::string>();
  } catch (const Error& err) {
    ctx->release_db();
    if (ctx->services.waits->cancel(waiter) && !fired->exchange(true))
      respond(ctx->services.render_error(ctx->request_id, err));
    return;
  } catch (const std::exception& err) {
    ctx->release_db();
    log::error("wait failed", {{"request_id", ctx->request_id}, {"error", err.what()}});
    if (ctx->services.waits->cancel(waiter) && !fired->exchange(true))
      respond(ctx->services.render_error(ctx->request_id, Error("internal_error", "internal error; retry")));
    return;
  }
  ctx->release_db();
  // Done already, or a quoted row that waiting cannot change: answer now.
  if ((transcription::is_terminal(status) || status == transcription::kQuoted) && ctx->services.waits->cancel(waiter))
    once(false);
}

}  // namespace scribe::api
