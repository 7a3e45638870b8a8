#include "common/unicode_fold.h"

namespace scribe::unicode {
namespace {

// Stands for a byte that does not start a well-formed sequence: no class
// below contains it, so it is kept as it is.
constexpr char32_t kMalformed = 0xFFFFFFFF;

// The code point starting at s[i] and its length in bytes; kMalformed, length
// 1, for a byte that does not start a well-formed sequence (a stray
// continuation byte 0xA0 is not a no-break space).
char32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
  const auto c = static_cast<unsigned char>(s[i]);
  len = 1;
  if (c < 0x80) return c;
  const std::size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return kMalformed;
  char32_t cp = c & (0xFF >> (n + 1));
  for (std::size_t j = 1; j < n; ++j) {
    const auto cont = static_cast<unsigned char>(s[i + j]);
    if ((cont & 0xC0) != 0x80) return kMalformed;
    cp = (cp << 6) | (cont & 0x3F);
  }
  len = n;
  return cp;
}

bool is_space(char32_t cp) {
  return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_control(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// Default-ignorable and format characters (they render as nothing), and
// combining marks, which only decorate the letter before them.
bool is_invisible(char32_t cp) {
  return cp == 0xAD || (cp >= 0x300 && cp <= 0x36F) || cp == 0x34F || cp == 0x61C || cp == 0x115F || cp == 0x1160 ||
         cp == 0x17B4 || cp == 0x17B5 || (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || (cp >= 0x20D0 && cp <= 0x20FF) ||
         cp == 0x3164 || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0xFEFF ||
         cp == 0xFFA0 || (cp >= 0xFFF0 && cp <= 0xFFF8) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
         (cp >= 0xE0000 && cp <= 0xE0FFF);
}

// Single code points that stand for one ASCII character (NFKC's mapping,
// and for the negative enclosed letters what a reader sees).
struct Single {
  char32_t cp;
  char ascii;
};
constexpr Single kSingles[] = {
    // Letterlike symbols (the holes of the mathematical alphabets live here).
    {0x2102, 'c'},
    {0x210A, 'g'},
    {0x210B, 'h'},
    {0x210C, 'h'},
    {0x210D, 'h'},
    {0x210E, 'h'},
    {0x2110, 'i'},
    {0x2111, 'i'},
    {0x2112, 'l'},
    {0x2113, 'l'},
    {0x2115, 'n'},
    {0x2119, 'p'},
    {0x211A, 'q'},
    {0x211B, 'r'},
    {0x211C, 'r'},
    {0x211D, 'r'},
    {0x2124, 'z'},
    {0x2128, 'z'},
    {0x212A, 'k'},
    {0x212C, 'b'},
    {0x212D, 'c'},
    {0x212F, 'e'},
    {0x2130, 'e'},
    {0x2131, 'f'},
    {0x2133, 'm'},
    {0x2134, 'o'},
    {0x2139, 'i'},
    {0x2145, 'd'},
    {0x2146, 'd'},
    {0x2147, 'e'},
    {0x2148, 'i'},
    {0x2149, 'j'},
    // Long s, dotted capital I, and modifier (superscript) letters.
    {0x017F, 's'},
    {0x0130, 'i'},
    {0x02B0, 'h'},
    {0x02B2, 'j'},
    {0x02B3, 'r'},
    {0x02B7, 'w'},
    {0x02B8, 'y'},
    {0x02E1, 'l'},
    {0x02E2, 's'},
    {0x02E3, 'x'},
    {0x1D43, 'a'},
    {0x1D47, 'b'},
    {0x1D48, 'd'},
    {0x1D49, 'e'},
    {0x1D4D, 'g'},
    {0x1D4F, 'k'},
    {0x1D50, 'm'},
    {0x1D52, 'o'},
    {0x1D56, 'p'},
    {0x1D57, 't'},
    {0x1D58, 'u'},
    {0x1D5B, 'v'},
    {0x1D9C, 'c'},
    {0x1DA0, 'f'},
    {0x1DBB, 'z'},
    {0x2071, 'i'},
    {0x207F, 'n'},
    // Subscript letters.
    {0x1D62, 'i'},
    {0x1D63, 'r'},
    {0x1D64, 'u'},
    {0x1D65, 'v'},
    {0x2090, 'a'},
    {0x2091, 'e'},
    {0x2092, 'o'},
    {0x2093, 'x'},
    {0x2095, 'h'},
    {0x2096, 'k'},
    {0x2097, 'l'},
    {0x2098, 'm'},
    {0x2099, 'n'},
    {0x2C7C, 'j'},
};

// Small form variants (U+FE50-FE6B) that stand for ASCII punctuation.
constexpr Single kSmallForms[] = {
    {0xFE50, ','}, {0xFE52, '.'}, {0xFE54, ';'}, {0xFE55, ':'}, {0xFE56, '?'},  {0xFE57, '!'}, {0xFE59, '('},
    {0xFE5A, ')'}, {0xFE5B, '{'}, {0xFE5C, '}'}, {0xFE5F, '#'}, {0xFE60, '&'},  {0xFE61, '*'}, {0xFE62, '+'},
    {0xFE63, '-'}, {0xFE64, '<'}, {0xFE65, '>'}, {0xFE66, '='}, {0xFE68, '\\'}, {0xFE69, '$'},
};

// Code points that stand for several ASCII letters.
struct Multi {
  char32_t cp;
  std::string_view ascii;
};
constexpr Multi kMultis[] = {
    {0xFB00, "ff"}, {0xFB01, "fi"},  {0xFB02, "fl"},   {0xFB03, "ffi"}, {0xFB04, "ffl"}, {0xFB05, "st"}, {0xFB06, "st"},
    {0x0132, "ij"}, {0x0133, "ij"},  {0x01C4, "dz"},   {0x01C5, "dz"},  {0x01C6, "dz"},  {0x01C7, "lj"}, {0x01C8, "lj"},
    {0x01C9, "lj"}, {0x01CA, "nj"},  {0x01CB, "nj"},   {0x01CC, "nj"},  {0x01F1, "dz"},  {0x01F2, "dz"}, {0x01F3, "dz"},
    {0x2161, "ii"}, {0x2162, "iii"}, {0x2163, "iv"},   {0x2171, "ii"},  {0x2172, "iii"}, {0x2173, "iv"}, {0x2122, "tm"},
    {0x2120, "sm"}, {0x2121, "tel"}, {0x33C2, "a.m."},
};

char letter(char32_t index) { return static_cast<char>('a' + index % 26); }

// The ASCII a code point stands for, or "" when it stands for none.
std::string ascii_of(char32_t cp) {
  // Fullwidth ASCII: U+FF01-FF5E is U+0021-007E shifted.
  if (cp >= 0xFF01 && cp <= 0xFF5E) return std::string(1, static_cast<char>(cp - 0xFEE0));
  // Mathematical alphanumeric symbols: 13 alphabets of A-Z then a-z
  // (U+1D400-1D6A3; the reserved holes map harmlessly), and 5 sets of digits.
  if (cp >= 0x1D400 && cp <= 0x1D6A3) return std::string(1, letter((cp - 0x1D400) % 52));
  if (cp >= 0x1D7CE && cp <= 0x1D7FF) return std::string(1, static_cast<char>('0' + (cp - 0x1D7CE) % 10));
  // Enclosed alphanumerics: parenthesized, circled capital and small letters.
  if (cp >= 0x249C && cp <= 0x24B5) return "(" + std::string(1, letter(cp - 0x249C)) + ")";
  if (cp >= 0x24B6 && cp <= 0x24E9) return std::string(1, letter((cp - 0x24B6) % 26));
  // Supplement: parenthesized, circled, squared, negative circled and
  // negative squared capitals, and the regional indicator letters.
  if (cp >= 0x1F110 && cp <= 0x1F129) return "(" + std::string(1, letter(cp - 0x1F110)) + ")";
  if (cp >= 0x1F130 && cp <= 0x1F149) return std::string(1, letter(cp - 0x1F130));
  if (cp >= 0x1F150 && cp <= 0x1F169) return std::string(1, letter(cp - 0x1F150));
  if (cp >= 0x1F170 && cp <= 0x1F189) return std::string(1, letter(cp - 0x1F170));
  if (cp >= 0x1F1E6 && cp <= 0x1F1FF) return std::string(1, letter(cp - 0x1F1E6));
  // Roman numerals of one letter (I V X L C D M, capital and small).
  if (cp >= 0x2160 && cp <= 0x217F) {
    switch ((cp - 0x2160) % 16) {
      case 0:
        return "i";
      case 4:
        return "v";
      case 9:
        return "x";
      case 12:
        return "l";
      case 13:
        return "c";
      case 14:
        return "d";
      case 15:
        return "m";
    }
  }
  for (const Single& e : kSingles)
    if (e.cp == cp) return std::string(1, e.ascii);
  for (const Single& e : kSmallForms)
    if (e.cp == cp) return std::string(1, e.ascii);
  for (const Multi& e : kMultis)
    if (e.cp == cp) return std::string(e.ascii);
  return "";
}

}  // namespace

std::string fold(std::string_view s, Invisible invisible) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 1;
    const char32_t cp = decode(s, i, len);
    const std::string_view raw = s.substr(i, len);
    i += len;
    if (is_space(cp) || is_control(cp) || (invisible == Invisible::kSpace && is_invisible(cp))) {
      pending_space = !out.empty();
      continue;
    }
    if (is_invisible(cp)) continue;
    if (pending_space) out.push_back(' ');
    pending_space = false;
    if (cp < 0x80) {
      out.push_back(cp >= 'A' && cp <= 'Z' ? static_cast<char>(cp - 'A' + 'a') : static_cast<char>(cp));
      continue;
    }
    std::string ascii = ascii_of(cp);
    for (char& c : ascii)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out += ascii.empty() ? std::string(raw) : ascii;
  }
  return out;
}

std::size_t space_at(std::string_view s, std::size_t i) {
  if (i >= s.size()) return 0;
  std::size_t len = 1;
  const char32_t cp = decode(s, i, len);
  return is_space(cp) || cp == 0x200B ? len : 0;
}

}  // namespace scribe::unicode
