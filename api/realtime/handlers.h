#pragma once
#include "api/router.h"

// The realtime routes (docs/realtime_protocol.md): sessions over HTTP, the
// stream over WebSocket, and the AssemblyAI Universal-Streaming v3 alias
// (docs/realtime_assemblyai_wire.md). One class per endpoint.
namespace scribe::api {

struct CreateRealtimeSessionHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/realtime/sessions
struct GetRealtimeSessionHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/realtime/sessions/{sessionId}
struct DeleteRealtimeSessionHandler {
  static Response handle(RequestContext& ctx);
};  // DELETE /api/v1/realtime/sessions/{sessionId}
struct ResumeRealtimeSessionHandler {
  static Response handle(RequestContext& ctx);
};  // POST /api/v1/realtime/sessions/{sessionId}/resume
struct RealtimeStreamHandler {
  static Response handle(RequestContext& ctx);
};  // GET /api/v1/realtime/ws (WebSocket; the ticket authorizes it)
struct AssemblyAiTokenHandler {
  static Response handle(RequestContext& ctx);
};  // GET /v3/token (AssemblyAI's temporary token: a session's ticket)
struct AssemblyAiStreamHandler {
  static Response handle(RequestContext& ctx);
};  // GET /v3/ws (WebSocket, AssemblyAI's wire)

}  // namespace scribe::api
