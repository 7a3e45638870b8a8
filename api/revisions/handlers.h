#pragma once
#include "api/router.h"

// Transcript revisions (domain/transcript_revision.h): the endpoints under
// /api/v1/transcriptions/{id}/revisions that list, read, save and undo a
// person's corrections of a completed transcription. The latest standing
// revision is what the exports serve as materialized cues
// (api/handlers/export_handlers.cpp) and what search finds.
namespace scribe::api::revisions {

struct RevisionsHandler {
  static Response list(RequestContext& ctx);  // GET .../revisions
  static Response get(RequestContext& ctx);   // GET .../revisions/{revision} (a number or "latest")
  static Response save(RequestContext& ctx);  // POST .../revisions
  static Response undo(RequestContext& ctx);  // DELETE .../revisions/latest
};

}  // namespace scribe::api::revisions
