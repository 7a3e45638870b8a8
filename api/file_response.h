#pragma once
#include <memory>

#include "api/http.h"
#include "api/router.h"

// The one way a stored file is answered to a GET that may ask for a range
// (clip files, a transcription's media): "Accept-Ranges: bytes"; one range of
// the Range header (api/byte_range.h) is 206 with Content-Range; a range
// past the end is 416 in the error envelope with "Content-Range: bytes */N";
// anything else is 200 with the whole file. The body is read from the file
// as the socket drains (Response::file), never held whole.
namespace scribe::api {

// `res` carries the status 200, Content-Type and the caller's own headers;
// the answer is `res` with the file selected, or the 416.
Response ranged_file(const RequestContext& ctx, std::shared_ptr<FileBody> file, Response res);

}  // namespace scribe::api
