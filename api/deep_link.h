#pragma once
#include <cstdint>
#include <optional>
#include <string>

// Links to a moment of a transcription's recording (search hits; later
// chapters, sections and citations). The rules, also written in the OpenAPI
// document:
//  - `video_site` and `platform_url`: the source link with a `t=<seconds>`
//    query parameter (YouTube's form, understood by most video sites), added
//    with `?` or `&` before any fragment, replacing a `t` the link had;
//  - `external_url`: the source link with a `#t=<seconds>` media fragment
//    (W3C Media Fragments, honoured by browsers' media players). The query is
//    left alone because direct media links are often signed, and changing the
//    query would break the signature;
//  - `upload`, or a link source whose URL is unknown: the player page
//    `{public_url}/app/transcriptions/<id>?t=<seconds>`.
// Seconds are whole seconds, rounded down.
namespace scribe::api {

std::string deep_link(const std::string& public_url, int64_t transcription_id, const std::string& source,
                      const std::optional<std::string>& url, int64_t start_ms);

}  // namespace scribe::api
