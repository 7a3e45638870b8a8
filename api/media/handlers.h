#pragma once
#include "api/router.h"

// A transcription's media for the web console's player (api/media/; the
// rules in domain/media_playback.h, the decisions in api/openapi.yaml under
// "Media"):
//  - GET /api/v1/transcriptions/{id}/media: a signed, expiring link to what
//    the player plays: the stored file when a browser plays it as it is,
//    else its rendition (made by the rendition worker; 409 not_ready with
//    Retry-After until it is);
//  - GET /media/files/{id}/{name}: that link, served with HTTP ranges (no
//    key: the link is the authorization, as for clip files);
//  - POST /api/v1/transcriptions/{id}/video: adds the original video to a
//    transcription of an upload, for video clips and the player.
namespace scribe::api::media_api {

struct GetMediaHandler {
  static Response handle(RequestContext& ctx);
};
struct MediaFileHandler {
  static Response handle(RequestContext& ctx);
};
struct AddVideoHandler {
  static Response handle(RequestContext& ctx);
};

}  // namespace scribe::api::media_api
