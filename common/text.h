#pragma once
#include <string>
#include <string_view>

// Text checks and renderings shared by every layer: UTF-8 as PostgreSQL text
// columns accept it, control characters as the spec forbids them, and
// numbers as error messages show them to people.
namespace scribe {

// True when `s` is well-formed UTF-8 (what PostgreSQL text columns accept).
bool is_valid_utf8(std::string_view s);
// Code points in well-formed UTF-8 `s`: the spec's lengths count characters.
std::size_t utf8_length(std::string_view s);
// True when `s` holds a control character: C0 (U+0000-U+001F), DEL (U+007F)
// or C1 (U+0080-U+009F, UTF-8 C2 80..C2 9F). Bytes of malformed UTF-8 are
// not judged here; check is_valid_utf8 as well where that matters.
bool has_control_chars(std::string_view s);

// A number as a person writes it in a message: plain decimal, no exponent,
// no trailing zeros, no thousands separators, at most six decimals (a
// micro-dollar), e.g. 0.001, 10000000, 0.016667, -2.5. Not for wire values,
// which stay JSON numbers.
std::string format_number(double v);

}  // namespace scribe
