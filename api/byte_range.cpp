#include "api/byte_range.h"

#include <charconv>

namespace scribe::api {
namespace {

std::optional<uint64_t> number(std::string_view s) {
  uint64_t v = 0;
  if (s.empty() || s.size() > 19) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

RangeAnswer parse_byte_range(std::string_view header, uint64_t size, ByteRange& range) {
  constexpr std::string_view kUnit = "bytes=";
  if (header.substr(0, kUnit.size()) != kUnit) return RangeAnswer::Whole;
  std::string_view spec = header.substr(kUnit.size());
  while (!spec.empty() && spec.front() == ' ') spec.remove_prefix(1);
  while (!spec.empty() && spec.back() == ' ') spec.remove_suffix(1);
  if (spec.find(',') != std::string_view::npos) return RangeAnswer::Whole;  // several ranges: the whole body
  const auto dash = spec.find('-');
  if (dash == std::string_view::npos) return RangeAnswer::Whole;
  const auto first = spec.substr(0, dash), last = spec.substr(dash + 1);
  if (first.empty()) {  // the last N bytes
    auto n = number(last);
    if (!n) return RangeAnswer::Whole;
    if (*n == 0 || size == 0) return RangeAnswer::Unsatisfiable;
    range = {*n >= size ? 0 : size - *n, size - 1};
    return RangeAnswer::Partial;
  }
  auto a = number(first);
  if (!a) return RangeAnswer::Whole;
  std::optional<uint64_t> b;
  if (!last.empty()) {
    b = number(last);
    if (!b || *b < *a) return RangeAnswer::Whole;
  }
  if (*a >= size) return RangeAnswer::Unsatisfiable;
  range = {*a, b && *b < size ? *b : size - 1};
  return RangeAnswer::Partial;
}

}  // namespace scribe::api
