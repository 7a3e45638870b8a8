// Every endpoint the server serves. The OpenAPI document must list exactly
// these (tests/e2e/openapi.test.mjs checks both directions).
#include "api/api_app.h"
#include "api/console/console.h"
#include "api/dashboard/dashboard.h"
#include "api/handlers/handlers.h"
#include "api/media/handlers.h"
#include "api/oauth/handlers.h"
#include "api/oauth/pages.h"
#include "api/oauth/protected_resource.h"
#include "api/openai/handlers.h"
#include "api/realtime/handlers.h"
#include "api/revisions/handlers.h"

namespace scribe::api {

void register_routes(ApiApp& app) {
  auto& r = app.router();
  auto pub = [&](const char* method, const char* pattern, Handler h) {
    r.add(Route{
        .method = method, .pattern = pattern, .authenticated = false, .rate_limited = false, .handler = std::move(h)});
  };
  auto authed = [&](const char* method, const char* pattern, Handler h) {
    r.add(Route{
        .method = method, .pattern = pattern, .authenticated = true, .rate_limited = true, .handler = std::move(h)});
  };
  pub("GET", "/healthz", HealthzHandler::handle);
  pub("GET", "/readyz", ReadyzHandler::handle);
  // GET /metrics is not here: it has a listener of its own (metrics_listener.h).
  pub("GET", "/api/v1/openapi.yaml", OpenApiHandler::handle);
  pub("GET", "/docs/errors", ErrorDocsHandler::handle);
  // /me checks the key in its own read (me_handler.cpp): one statement per request.
  r.add(Route{.method = "GET",
              .pattern = "/api/v1/me",
              .authenticated = true,
              .rate_limited = true,
              .handler = MeHandler::handle,
              .handler_checks_key = true});
  authed("GET", "/api/v1/pipelines", PipelinesHandler::handle);
  authed("POST", "/api/v1/quotes", QuoteHandler::handle);
  authed("POST", "/api/v1/transcriptions", CreateTranscriptionHandler::handle);
  authed("GET", "/api/v1/transcriptions", ListTranscriptionsHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}", GetTranscriptionHandler::handle);
  authed("DELETE", "/api/v1/transcriptions/{id}", DeleteTranscriptionHandler::handle);
  authed("POST", "/api/v1/transcriptions/{id}/retry", RetryTranscriptionHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/result", ResultHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/timestamps", TimestampsHandler::handle);
  // Regeneration and asks compute on their request thread: bounded in flight per account.
  r.add(Route{.method = "POST",
              .pattern = "/api/v1/transcriptions/{id}/timestamps/regenerate",
              .authenticated = true,
              .rate_limited = true,
              .handler = RegenerateTimestampsHandler::handle,
              .long_running = true});
  authed("GET", "/api/v1/transcriptions/{id}/transcript", TranscriptHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/subtitles", SubtitlesHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/words", WordsHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/search", TranscriptionSearchHandler::handle);
  // Transcript revisions (api/revisions/): a person's corrections as a layer
  // over the recognized transcript; DELETE .../latest is undo.
  authed("GET", "/api/v1/transcriptions/{id}/revisions", revisions::RevisionsHandler::list);
  authed("POST", "/api/v1/transcriptions/{id}/revisions", revisions::RevisionsHandler::save);
  // .../latest first (the first route that matches serves): GET reads it, DELETE undoes it.
  authed("GET", "/api/v1/transcriptions/{id}/revisions/latest", revisions::RevisionsHandler::get);
  authed("DELETE", "/api/v1/transcriptions/{id}/revisions/latest", revisions::RevisionsHandler::undo);
  authed("GET", "/api/v1/transcriptions/{id}/revisions/{revision}", revisions::RevisionsHandler::get);
  authed("GET", "/api/v1/search", SearchHandler::handle);
  // A saved answer's idempotent copy is stored with its entry and redacted
  // with it (ask_handlers.cpp).
  for (auto [pattern, handler] :
       {std::pair<const char*, Handler>{"/api/v1/transcriptions/{id}/ask", AskTranscriptionHandler::handle},
        std::pair<const char*, Handler>{"/api/v1/ask", AskLibraryHandler::handle}})
    r.add(Route{.method = "POST",
                .pattern = pattern,
                .authenticated = true,
                .rate_limited = true,
                .handler = handler,
                .long_running = true});
  authed("DELETE", "/api/v1/transcriptions/{id}/ask/{qnaId}", DeleteTranscriptionAskHandler::handle);
  authed("DELETE", "/api/v1/ask/{qnaId}", DeleteLibraryAskHandler::handle);
  authed("POST", "/api/v1/transcriptions/{id}/clips", CreateClipHandler::handle);
  // Realtime (api/realtime/): sessions over HTTP; the stream is a WebSocket
  // that its single-use ticket authorizes, not a key (docs/realtime_protocol.md).
  authed("POST", "/api/v1/realtime/sessions", CreateRealtimeSessionHandler::handle);
  authed("GET", "/api/v1/realtime/sessions/{sessionId}", GetRealtimeSessionHandler::handle);
  authed("DELETE", "/api/v1/realtime/sessions/{sessionId}", DeleteRealtimeSessionHandler::handle);
  authed("POST", "/api/v1/realtime/sessions/{sessionId}/resume", ResumeRealtimeSessionHandler::handle);
  pub("GET", "/api/v1/realtime/ws", RealtimeStreamHandler::handle);
  // AssemblyAI's Universal-Streaming v3 wire on the same sessions
  // (docs/realtime_assemblyai_wire.md): its SDK sends the key without
  // "Bearer" (ApiApp::dispatch adds it) and reads {"error": "..."} bodies.
  authed("GET", "/v3/token", AssemblyAiTokenHandler::handle);
  pub("GET", "/v3/ws", AssemblyAiStreamHandler::handle);
  // Before .../clips/{clipId}: the first route that matches serves.
  authed("GET", "/api/v1/transcriptions/{id}/clips/quote", ClipQuoteHandler::handle);
  authed("GET", "/api/v1/transcriptions/{id}/clips", ListClipsHandler::handle);
  r.add(Route{.method = "GET",
              .pattern = "/api/v1/transcriptions/{id}/clips/{clipId}",
              .authenticated = true,
              .rate_limited = true,
              .async_handler = GetClipHandler::handle});
  // The clip's files: authorized by the link's signature, not by a key.
  pub("GET", "/clips/files/{clipId}/{name}", ClipFileHandler::handle);
  // A transcription's media for the console's player (api/media/): the
  // signed link to it, its file (authorized by the link), its added video.
  authed("GET", "/api/v1/transcriptions/{id}/media", media_api::GetMediaHandler::handle);
  pub("GET", "/media/files/{id}/{name}", media_api::MediaFileHandler::handle);
  authed("POST", "/api/v1/transcriptions/{id}/video", media_api::AddVideoHandler::handle);
  // MCP (mcp_handlers.cpp): the same keys and limiter as the REST API.
  r.add(Route{.method = "POST",
              .pattern = "/mcp",
              .authenticated = true,
              .rate_limited = true,
              .async_handler = McpHandler::post,
              .own_protocol = true});
  for (const char* method : {"GET", "DELETE"})
    r.add(Route{.method = method,
                .pattern = "/mcp",
                .authenticated = true,
                .rate_limited = true,
                .handler = McpHandler::other,
                .own_protocol = true});
  pub("GET", "/.well-known/mcp/server-card.json", McpServerCardHandler::handle);
  pub("GET", "/mcp/server-card", McpServerCardHandler::handle);
  pub("GET", "/.well-known/mcp/server.json", McpServerJsonHandler::handle);
  // OAuth protected-resource metadata (RFC 9728): the REST API's and /mcp's.
  pub("GET", "/.well-known/oauth-protected-resource", oauth::ProtectedResourceHandler::rest);
  pub("GET", "/.well-known/oauth-protected-resource/mcp", oauth::ProtectedResourceHandler::mcp);
  // The authorization server (api/oauth/): its metadata (RFC 8414), client
  // registration (RFC 7591), the authorization endpoint with its sign-in and
  // consent pages (cookies only here, under /oauth), the token and
  // revocation endpoints. Not Bearer-authenticated; registration and
  // sign-in have limits of their own (domain/limits.h).
  pub("GET", "/.well-known/oauth-authorization-server", oauth::AuthorizationServerMetadataHandler::handle);
  pub("POST", "/oauth/register", oauth::RegisterHandler::handle);
  pub("GET", "/oauth/authorize", oauth::AuthorizeHandler::handle);
  pub("POST", "/oauth/sign-in", oauth::SignInHandler::handle);
  pub("POST", "/oauth/consent", oauth::ConsentHandler::handle);
  pub("POST", "/oauth/token", oauth::TokenHandler::handle);
  pub("POST", "/oauth/revoke", oauth::RevokeHandler::handle);
  pub("GET", "/oauth/static/oauth.css", oauth::OAuthStyleHandler::handle);
  authed("GET", "/api/v1/webhooks", GetWebhookHandler::handle);
  authed("POST", "/api/v1/webhooks", RegisterWebhookHandler::handle);
  authed("DELETE", "/api/v1/webhooks", DeleteWebhookHandler::handle);
  authed("POST", "/api/v1/webhooks/test", TestWebhookHandler::handle);
  authed("POST", "/api/v1/uploads", CreateUploadHandler::handle);
  authed("POST", "/api/v1/uploads/tus", CreateTusTicketHandler::handle);
  // The upload URLs themselves: authorized by their signature or resume
  // token, not by a key, and not rate-limited (a resumed upload is many PATCHes).
  pub("PUT", "/uploads/presigned/{upload_id}", PutPresignedUploadHandler::handle);
  app.add_stream("PUT", "/uploads/presigned/{upload_id}", PutPresignedUploadHandler::precheck);
  pub("POST", "/api/v1/uploads/tus/files", TusCreateHandler::handle);
  pub("HEAD", "/api/v1/uploads/tus/files/{upload}", TusHeadHandler::handle);
  pub("PATCH", "/api/v1/uploads/tus/files/{upload}", TusPatchHandler::handle);
  app.add_stream("PATCH", "/api/v1/uploads/tus/files/{upload}", TusPatchHandler::precheck);
  pub("DELETE", "/api/v1/uploads/tus/files/{upload}", TusDeleteHandler::handle);
  r.add(Route{.method = "GET",
              .pattern = "/api/v1/transcriptions/{id}/wait",
              .authenticated = true,
              .rate_limited = true,
              .async_handler = WaitHandler::handle});
  // OpenAI-compatible speech to text (api/openai/): the body streams to disk
  // after a precheck that counts the request against the rate limit, so the
  // route itself does not count it again; it waits for the transcription
  // without a thread, and claims its Idempotency-Key itself.
  app.add_stream("POST", "/v1/audio/transcriptions", openai::TranscriptionsHandler::precheck, true);
  r.add(Route{.method = "POST",
              .pattern = "/v1/audio/transcriptions",
              .authenticated = true,
              .rate_limited = false,
              .async_handler = openai::TranscriptionsHandler::handle,
              .claims_idempotency = true});
  authed("GET", "/v1/models", openai::ModelsHandler::list);
  authed("GET", "/v1/models/{model}", openai::ModelsHandler::get);
  // The web console's own endpoints (api/dashboard/): its sign-in's tokens
  // only (Route::console_only); POST keys leaves Idempotency-Key alone (a
  // stored replay would keep the plaintext key).
  auto console = [&](const char* method, const char* pattern, Handler h) {
    r.add(Route{.method = method,
                .pattern = pattern,
                .authenticated = true,
                .rate_limited = true,
                .handler = std::move(h),
                .claims_idempotency = true,
                .console_only = true});
  };
  console("GET", "/dashboard/api/v1/keys", dashboard::KeysHandler::list);
  console("POST", "/dashboard/api/v1/keys", dashboard::KeysHandler::create);
  console("DELETE", "/dashboard/api/v1/keys/{id}", dashboard::KeysHandler::revoke);
  console("GET", "/dashboard/api/v1/keys/{id}/webhook", dashboard::KeyWebhookHandler::get);
  console("PUT", "/dashboard/api/v1/keys/{id}/webhook", dashboard::KeyWebhookHandler::put);
  console("DELETE", "/dashboard/api/v1/keys/{id}/webhook", dashboard::KeyWebhookHandler::remove);
  console("GET", "/dashboard/api/v1/connected-apps", dashboard::ConnectedAppsHandler::list);
  // ?client_id=: a metadata-document client's id is a URL, which a path segment cannot carry.
  console("DELETE", "/dashboard/api/v1/connected-apps", dashboard::ConnectedAppsHandler::disconnect);
  console("GET", "/dashboard/api/v1/usage", dashboard::UsageHandler::get);
  console("POST", "/dashboard/api/v1/keys/{id}/webhook/test", dashboard::KeyWebhookHandler::test);
  console("GET", "/dashboard/api/v1/keys/{id}/webhook/deliveries", dashboard::KeyWebhookHandler::deliveries);
  // The web console itself (api/console/): its pages, hashed assets and
  // sign-in configuration, public; each response carries its CSP.
  for (const char* page : console::kPages) pub("GET", page, console::ConsolePageHandler::handle);
  pub("GET", "/app/assets/{name}", console::ConsoleAssetHandler::handle);
  pub("GET", "/app/config.json", console::ConsoleConfigHandler::handle);
}

}  // namespace scribe::api
