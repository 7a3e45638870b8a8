#pragma once
#include <cstddef>
#include <string>
#include <string_view>

// Folding of UTF-8 text for checks that look for ASCII words in it (the
// refine prompt's injection markers, the links the link-free posting formats
// remove): text that reads as an ASCII word to a person or a model must fold
// to that word, whatever Unicode spelling it was given.
//
// Why a table rather than ICU's NFKC_Casefold: the checks match ASCII only,
// so only the code points whose compatibility form is ASCII, and the spaces
// and invisible characters, can change their outcome. Those sit in a handful
// of ranges (below, in unicode_fold.cpp), which a table covers exactly and
// testably, without linking ICU (and its 30 MB of data) into a binary that
// otherwise needs no Unicode tables. The table also folds what NFKC leaves
// alone but a reader still reads as a letter (negative squared and circled
// letters, combining marks over ASCII letters). Look-alike letters of other
// scripts (Cyrillic "о" for "o") are confusables (UTS #39), which NFKC does
// not fold either; they are not folded here.
namespace scribe::unicode {

// What becomes of an invisible character (zero-width space, joiner and
// non-joiner, word joiner, BOM, soft hyphen, bidi controls, variation
// selectors, tag characters, combining marks).
enum class Invisible {
  kDrop,   // "ig<ZWSP>nore" folds to "ignore"
  kSpace,  // "ignore<ZWSP>previous" folds to "ignore previous"
};

// `s` folded for matching: compatibility forms that stand for ASCII
// (fullwidth forms, ligatures such as "ﬁ", mathematical and enclosed
// letters, letterlike symbols, super- and subscript letters, small form
// variants, long s) become that ASCII; ASCII letters are lower-cased; every
// run of whitespace (ASCII, no-break and the other Unicode spaces, line and
// paragraph separators) and control characters becomes one space; invisible
// characters are dropped or spaced as `invisible` says; leading and trailing
// space is trimmed. Other code points are kept as they are, and a byte that
// does not start well-formed UTF-8 is kept as it is.
std::string fold(std::string_view s, Invisible invisible = Invisible::kDrop);

// The length in bytes of the whitespace character starting at s[i] (ASCII
// whitespace, no-break space and the other Unicode space separators, line
// and paragraph separators, zero-width space), or 0 when there is none.
std::size_t space_at(std::string_view s, std::size_t i);

}  // namespace scribe::unicode
