#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

// One byte range of a Range header (RFC 9110, 14.1.2), as the clip file links
// serve it so that players (iOS Safari among them) can seek in an MP4.
namespace scribe::api {

struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

enum class RangeAnswer {
  Whole,          // no Range, a form not served (several ranges, other units) or malformed: 200 with it all
  Partial,        // 206 with `range`
  Unsatisfiable,  // 416: the range starts past the end
};

// "bytes=FIRST-LAST", "bytes=FIRST-" or "bytes=-SUFFIX" against a body of
// `size` bytes; LAST past the end is cut to it (the RFC's rule).
RangeAnswer parse_byte_range(std::string_view header, uint64_t size, ByteRange& range);

}  // namespace scribe::api
