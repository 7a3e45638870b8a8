// What the link-free posting formats (photo_caption, professional_post)
// remove: every word a platform would render as a link. Platforms link far
// more than http(s) URLs (bare domains, e-mail addresses, other schemes), so
// a word is judged on its Unicode-folded form (common/unicode_fold.h: a
// fullwidth or zero-width-split "ｅｖｉｌ．ｃｏｍ" is still a domain) by the
// rules below, and removed whole.
#include <algorithm>
#include <array>

#include "common/unicode_fold.h"
#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

// Schemes that make a link without "//" ("mailto:a@b.c", "javascript:...",
// "data:text/html,...") and that platforms or browsers act on. Any scheme
// followed by "://" is a link whatever its name.
constexpr std::array<std::string_view, 30> kSchemes = {
    "bitcoin", "blob", "callto", "data",   "facetime", "file",     "ftp",    "ftps",     "http",       "https",
    "intent",  "irc",  "ircs",   "magnet", "mailto",   "market",   "sftp",   "sip",      "sips",       "skype",
    "sms",     "ssh",  "tel",    "telnet", "tg",       "vbscript", "webcal", "whatsapp", "javascript", "xmpp"};

// Top-level domains: every country code (the two-letter delegations of the
// public suffix list, 2023), and the generic ones in common use: the
// original ones, and the new ones most registered or most used for abuse
// (zip and mov among them: "clip.mov" is a link on the platforms that link
// bare domains). Not the full IANA list: its 1,400 names include English
// words (today, show, army, team) that would make a missing space after a
// full stop ("Done.Today") a link.
constexpr std::string_view kCountryCodes =
    "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb be bf bg bh bi bj bm bn bo br bs bt bv bw by bz ca cc "
    "cd cf cg ch ci cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg es et eu fi fj fm fo fr ga gb gd ge "
    "gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jo jp ke kg ki "
    "km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mn mo mp mq mr ms mt mu mv mw mx "
    "my mz na nc ne nf ng ni nl no nr nu nz om pa pe pf ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd "
    "se sg sh si sj sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk "
    "us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw";
constexpr std::string_view kGeneric =
    "aero app arpa art asia beauty bid biz blog bond buzz cam casa cat cfd click cloud club com coop cyou dev "
    "digital edu email fun fyi gdn gov guru hair host icu info int jobs lat lol makeup mil mobi mom monster mov "
    "museum name net ninja online org page pics post pro quest rest sbs shop site skin space store tech tel top "
    "travel uno vip website wiki work xxx xyz zip";

bool in_list(std::string_view list, std::string_view word) {
  for (std::size_t at = list.find(word); at != std::string_view::npos; at = list.find(word, at + 1)) {
    const bool starts = at == 0 || list[at - 1] == ' ';
    const bool ends = at + word.size() == list.size() || list[at + word.size()] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

bool is_letter(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_letter(c) || is_digit(c); }
bool is_non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
// A character of a host label: ASCII letters, digits, '-' and '_', and any
// non-ASCII byte (internationalized names such as "café.com").
bool is_label_char(char c) { return is_alnum(c) || c == '-' || c == '_' || is_non_ascii(c); }

bool is_tld(std::string_view tld) {
  if (tld.starts_with("xn--")) return tld.size() > 4;  // an internationalized TLD in its ASCII form
  return tld.size() >= 2 && (in_list(kCountryCodes, tld) || in_list(kGeneric, tld));
}

// "scheme:" followed by something, at word start `i` of folded `w`.
bool scheme_at(std::string_view w, std::size_t i) {
  std::size_t j = i;
  while (j < w.size() && (is_alnum(w[j]) || w[j] == '+' || w[j] == '-' || w[j] == '.')) ++j;
  if (j == i || j >= w.size() || w[j] != ':') return false;
  if (std::find(kSchemes.begin(), kSchemes.end(), w.substr(i, j - i)) == kSchemes.end()) return false;
  // "JavaScript: the good parts" is a heading, not a link: something must follow.
  return std::any_of(w.begin() + static_cast<std::ptrdiff_t>(j) + 1, w.end(),
                     [](char c) { return is_alnum(c) || c == '/' || c == '%' || is_non_ascii(c); });
}

// A dot at `dot` that ends a host: a label before it, a known top-level
// domain after it, and no more of a label after that (a path, a port, a
// query, punctuation or the end may follow). Covers bare domains with or
// without a path and the domain of an e-mail address.
bool host_end_at(std::string_view w, std::size_t dot) {
  if (dot == 0 || !is_label_char(w[dot - 1]) || w[dot - 1] == '-') return false;
  std::size_t end = dot + 1;
  if (w.substr(end).starts_with("xn--")) {
    while (end < w.size() && (is_alnum(w[end]) || w[end] == '-')) ++end;
  } else {
    while (end < w.size() && is_letter(w[end])) ++end;
    // "mp4", "x86": a digit or '-' continues a label, so this is no TLD.
    if (end < w.size() && (is_digit(w[end]) || w[end] == '-' || w[end] == '_')) return false;
  }
  return is_tld(w.substr(dot + 1, end - dot - 1));
}

}  // namespace

bool holds_link(std::string_view word) {
  const std::string w = unicode::fold(word);
  // Any scheme with an authority: http, ftp, ssh, chrome-extension, ...
  if (w.find("://") != std::string::npos) return true;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const bool word_start = i == 0 || !is_alnum(w[i - 1]);
    if (word_start && scheme_at(w, i)) return true;
    if (word_start && w.compare(i, 4, "www.") == 0 && i + 4 < w.size() && is_label_char(w[i + 4])) return true;
    if (w[i] == '.' && host_end_at(w, i)) return true;
  }
  return false;
}

int strip_urls(std::string& text) {
  // Words are separated by ASCII whitespace and by the Unicode spaces
  // (a no-break space must not join a domain to the word before it).
  std::string out;
  int removed = 0;
  std::string_view sep;
  std::size_t i = 0;
  const std::string_view t = text;
  while (i < t.size()) {
    const std::size_t sep_start = i;
    while (std::size_t n = unicode::space_at(t, i)) i += n;
    sep = t.substr(sep_start, i - sep_start);
    const std::size_t start = i;
    while (i < t.size() && unicode::space_at(t, i) == 0) {
      ++i;  // to the next code point: a continuation byte 0xA0 is no no-break space
      while (i < t.size() && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80) ++i;
    }
    const std::string_view word = t.substr(start, i - start);
    if (word.empty()) break;
    if (holds_link(word)) {
      ++removed;
      continue;
    }
    // A kept word keeps the space before it, unless it now starts the text.
    if (!out.empty()) out += sep.empty() ? " " : sep;
    out += word;
  }
  if (removed > 0) text = std::move(out);
  return removed;
}

}  // namespace scribe::posting
