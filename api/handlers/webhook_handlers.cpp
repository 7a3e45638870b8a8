// GET, POST, DELETE /api/v1/webhooks and POST /api/v1/webhooks/test: one
// registered webhook per API key. Deliveries are made by the dispatcher
// (workers/webhook_dispatcher.cpp) from the outbox.
//
// The rules of a key's webhook are in api/key_webhook.h (shared with the
// console's /dashboard/api/v1/keys/{id}/webhook); DELETE with no webhook
// registered is 404 not_found, like /test.
#include "api/handlers/handlers.h"
#include "api/key_webhook.h"
#include "api/services.h"
#include "commands/webhook_commands.h"
#include "common/error.h"

namespace scribe::api {
namespace {

// Webhooks belong to API keys; OAuth callers use per-request callbacks.
int64_t key_of(RequestContext& ctx) {
  const auto& p = ctx.caller();
  if (p.kind != Principal::Kind::ApiKey || !p.key_id)
    throw Error("forbidden", "webhooks are registered per API key; OAuth tokens may use callback_url instead");
  return *p.key_id;
}

}  // namespace

Response GetWebhookHandler::handle(RequestContext& ctx) {
  return Response::json(200, {{"webhook", key_webhook(ctx, key_of(ctx))}});
}

Response RegisterWebhookHandler::handle(RequestContext& ctx) {
  return Response::json(201, register_key_webhook(ctx, key_of(ctx)));
}

Response DeleteWebhookHandler::handle(RequestContext& ctx) {
  revoke_key_webhook(ctx, key_of(ctx));
  return Response::json(200, {{"revoked", true}});
}

Response TestWebhookHandler::handle(RequestContext& ctx) {
  const int64_t key_id = key_of(ctx);
  auto delivery = commands::request_webhook_test(ctx.services.store, ctx.db(), ctx.caller().account_id, key_id,
                                                 {ctx.caller().idempotency_principal(), ctx.request_id});
  return Response::json(202, {{"delivery_id", delivery}, {"enqueued", true}});
}

}  // namespace scribe::api
