#pragma once
#include "api/router.h"

// One class per endpoint; each `handle` runs on a worker thread with the
// caller already authenticated, rate-limited and scope-checked.
namespace scribe::api {

struct HealthzHandler {
  static Response handle(RequestContext& ctx);
};  // GET /healthz
struct ReadyzHandler {
  static Response handle(RequestContext& ctx);
};  // GET /readyz
struct MetricsHandler {
  static Response handle(RequestContext& ctx);
};  // GET /metrics (metrics listener)
struct OpenApiHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/openapi.yaml
struct ErrorDocsHandler {
  static Response handle(RequestContext& ctx);
};  // GET /docs/errors
struct MeHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/me
struct PipelinesHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/pipelines
struct QuoteHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/quotes
struct CreateTranscriptionHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/transcriptions
struct ListTranscriptionsHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/transcriptions
struct GetTranscriptionHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}
struct DeleteTranscriptionHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE .../{id}
struct RetryTranscriptionHandler {
  static Response handle(RequestContext& ctx);
};  // POST .../{id}/retry
struct ResultHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/result
struct TranscriptHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/transcript
struct SubtitlesHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/subtitles
struct WordsHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/words
struct TimestampsHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/timestamps
struct RegenerateTimestampsHandler {
  static Response handle(RequestContext& ctx);
};  // POST .../{id}/timestamps/regenerate
struct AskTranscriptionHandler {
  static Response handle(RequestContext& ctx);
};  // POST .../{id}/ask
struct AskLibraryHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/ask
struct DeleteTranscriptionAskHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE .../{id}/ask/{qnaId}
struct CreateClipHandler {
  static Response handle(RequestContext& ctx);
};  // POST .../{id}/clips
struct ClipQuoteHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/clips/quote
struct ListClipsHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/clips
// GET .../{id}/clips/{clipId}: asynchronous, a long-poll with `wait`.
struct GetClipHandler {
  static void handle(std::shared_ptr<RequestContext> ctx, Responder respond);
  static std::string key(int64_t clip_id);  // the WaitRegistry key a clip's outcome notifies
};
struct ClipFileHandler {
  static Response handle(RequestContext& ctx);
};  // GET /clips/files/{clipId}/{name} (signed link, no key)
struct DeleteLibraryAskHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE /api/v1/ask/{qnaId}
// The MCP endpoint (mcp_handlers.cpp): POST is asynchronous (a tool may
// long-poll); GET and DELETE answer at once.
struct McpHandler {
  static void post(std::shared_ptr<RequestContext> ctx, Responder respond);
  static Response other(RequestContext& ctx);
};  // POST, GET, DELETE /mcp
struct McpServerCardHandler {
  static Response handle(RequestContext& ctx);
};  // GET /.well-known/mcp/server-card.json, GET /mcp/server-card
struct McpServerJsonHandler {
  static Response handle(RequestContext& ctx);
};  // GET /.well-known/mcp/server.json
struct SearchHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/search
struct TranscriptionSearchHandler {
  static Response handle(RequestContext& ctx);
};  // GET .../{id}/search
// Media intake (upload_handlers.cpp, tus_handlers.cpp). Streamed routes also
// have a precheck that runs on the request head before the body is read.
struct CreateUploadHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/uploads
struct CreateTusTicketHandler {
  static Response handle(RequestContext& ctx);
};                                  // POST /api/v1/uploads/tus
struct PutPresignedUploadHandler {  // PUT /uploads/presigned/{upload_id}
  static StreamPlan precheck(RequestContext& ctx);
  static Response handle(RequestContext& ctx);
};
struct TusCreateHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/uploads/tus/files
struct TusHeadHandler {
  static Response handle(RequestContext& ctx);
};                        // HEAD .../files/{upload}
struct TusPatchHandler {  // PATCH .../files/{upload}
  static StreamPlan precheck(RequestContext& ctx);
  static Response handle(RequestContext& ctx);
};
struct TusDeleteHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE .../files/{upload}
// Webhooks (webhook_handlers.cpp): API keys only.
struct GetWebhookHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/webhooks
struct RegisterWebhookHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/webhooks
struct DeleteWebhookHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE /api/v1/webhooks
struct TestWebhookHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/webhooks/test
// GET .../{id}/wait: asynchronous, see wait_handler.cpp.
struct WaitHandler {
  static void handle(std::shared_ptr<RequestContext> ctx, Responder respond);
  // The WaitRegistry key that the completion of transcription `id` notifies.
  static std::string key(int64_t transcription_id);
};

}  // namespace scribe::api
