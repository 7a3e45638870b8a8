#pragma once
#include "api/router.h"

// One class per endpoint; each `handle` runs on a worker thread with the
// caller already authenticated, rate-limited and scope-checked.
namespace scribe::api {

struct HealthzHandler { static Response handle(RequestContext& ctx); };    // GET /healthz
struct ReadyzHandler { static Response handle(RequestContext& ctx); };     // GET /readyz
struct MetricsHandler { static Response handle(RequestContext& ctx); };    // GET /metrics
struct OpenApiHandler { static Response handle(RequestContext& ctx); };    // GET /api/v1/openapi.yaml
struct MeHandler { static Response handle(RequestContext& ctx); };         // GET /api/v1/me
struct PipelinesHandler { static Response handle(RequestContext& ctx); };  // GET /api/v1/pipelines
struct QuoteHandler { static Response handle(RequestContext& ctx); };      // POST /api/v1/quotes
struct CreateTranscriptionHandler { static Response handle(RequestContext& ctx); };  // POST /api/v1/transcriptions
struct ListTranscriptionsHandler { static Response handle(RequestContext& ctx); };   // GET /api/v1/transcriptions
struct GetTranscriptionHandler { static Response handle(RequestContext& ctx); };     // GET .../{id}
struct DeleteTranscriptionHandler { static Response handle(RequestContext& ctx); };  // DELETE .../{id}
struct RetryTranscriptionHandler { static Response handle(RequestContext& ctx); };   // POST .../{id}/retry
struct ResultHandler { static Response handle(RequestContext& ctx); };               // GET .../{id}/result
// GET .../{id}/wait: asynchronous, see wait_handler.cpp.
struct WaitHandler {
  static void handle(std::shared_ptr<RequestContext> ctx, Responder respond);
  // The WaitRegistry key that the completion of transcription `id` notifies.
  static std::string key(int64_t transcription_id);
};

}  // namespace scribe::api
