#pragma once
#include <string>
#include <string_view>
#include <vector>

// Text checks and renderings shared by every layer: UTF-8 as PostgreSQL text
// columns accept it, control characters as the spec forbids them, numbers as
// error messages show them to people, and the small ASCII operations (case,
// trimming, percent-decoding, comma lists) that every parser here needs, so
// that each behaves the same wherever it is used.
namespace scribe {

// `s` with A-Z lower-cased and every other byte (UTF-8 sequences included)
// unchanged. Unlike std::tolower it does not depend on the C locale.
std::string to_lower(std::string_view s);

// What trim() removes unless told otherwise: space, tab, CR and LF. Form
// feed and vertical tab are not in it (no input here means them as blanks).
inline constexpr std::string_view kBlankChars = " \t\r\n";

// `s` without the leading and trailing characters in `chars`. A view into
// `s`: copy it (std::string(trim(x))) before `s` goes away.
std::string_view trim(std::string_view s, std::string_view chars = kBlankChars);

// How percent_decode treats the two things percent-encoding leaves open.
struct PercentDecoding {
  // '+' decodes to ' ' (query strings, HTML forms); otherwise it stays '+'.
  bool plus_is_space = false;
  // A '%' not followed by two hex digits ("%", "%4", "%zz") is kept as it
  // is; otherwise the whole input is refused (nullopt).
  bool keep_malformed = false;
};

// Sets `out` to `s` with every %XX (hex digits of either case) replaced by
// its byte; the result may be any bytes, not necessarily UTF-8. False when a
// malformed escape is met and `how.keep_malformed` is false: `out` then holds
// what was decoded before it (the path that routing sees of a bad target).
bool percent_decode(std::string_view s, std::string& out, PercentDecoding how = {});
// Percent-encodes every byte but RFC 3986's unreserved characters (letters,
// digits, "-._~"): safe as a query name or value and as a path segment.
std::string percent_encode(std::string_view s);
// `s` safe as HTML text and inside a double-quoted attribute: & < > " and '
// become character references.
std::string html_escape(std::string_view s);

enum class EmptyItems { kKeep, kDrop };

// The items of a comma-separated list, each trimmed of kBlankChars. With
// kKeep every comma separates two items, so "" is {""}, "a,,b" is
// {"a", "", "b"} and "a," is {"a", ""}: a caller can refuse empty items.
// With kDrop the items that are empty after trimming are left out ("" and
// " , " are {}).
std::vector<std::string> split_list(std::string_view s, EmptyItems empty_items);

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
