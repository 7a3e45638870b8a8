#include "api/file_response.h"

#include <string>

#include "api/byte_range.h"
#include "api/services.h"
#include "common/error.h"

namespace scribe::api {

Response ranged_file(const RequestContext& ctx, std::shared_ptr<FileBody> file, Response res) {
  const uint64_t size = file->file_size();
  res.set_header("Accept-Ranges", "bytes");
  // Players seek in media with Range requests (one range; anything else gets
  // the whole file, as the RFC allows).
  ByteRange range{0, size ? size - 1 : 0};
  switch (ctx.req.header("range") ? parse_byte_range(*ctx.req.header("range"), size, range) : RangeAnswer::Whole) {
    case RangeAnswer::Unsatisfiable: {
      Response refused = ctx.services.render_error(
          ctx.request_id, Error("invalid_request", "the range starts past the end of the file", {{"size", size}}));
      refused.status = 416;
      refused.set_header("Content-Range", "bytes */" + std::to_string(size));
      return refused;
    }
    case RangeAnswer::Partial:
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
                                          std::to_string(size));
      break;
    case RangeAnswer::Whole:
      break;
  }
  file->select(range.first, size ? range.last - range.first + 1 : 0);
  res.file = std::move(file);
  return res;
}

}  // namespace scribe::api
