#pragma once
#include "api/router.h"

// The OpenAI-compatible surface under /v1 (docs/openai_compat_notes.md has
// the wire rules and their sources; api/openapi.yaml the decisions). It runs
// on the same commands, wallet and pipeline as /api/v1: a transcription made
// here is an `upload` transcription of the account like any other.
namespace scribe::api::openai {

// POST /v1/audio/transcriptions: the multipart body streams through
// FormUpload (precheck, on the head: key, rate limit, scope, content type and
// length), then handle() claims the request (Idempotency-Key, or the no-key
// dedupe window), creates the transcription, and answers when it is done
// without holding a thread (WaitRegistry), as JSON, text or an event stream.
struct TranscriptionsHandler {
  static StreamPlan precheck(RequestContext& ctx);
  static void handle(std::shared_ptr<RequestContext> ctx, Responder respond);
};

// GET /v1/models and GET /v1/models/{model}: what `model` takes.
struct ModelsHandler {
  static Response list(RequestContext& ctx);
  static Response get(RequestContext& ctx);
};

}  // namespace scribe::api::openai
