#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

// Paste-ready chapter text for GET /transcriptions/{id}/timestamps: each
// platform's rules as one row of data (platforms()), and the rendering of a
// posting-chapters variant under those rules. Pure: the handler loads the
// items and their deep links, calls render() and sends the result, so every
// platform rule is tested without a database or HTTP.
//
// What render() guarantees for every format and variant:
// - text is never cut inside a UTF-8 sequence or inside a word: titles,
//   quotes and footers are shortened only at ASCII whitespace (with "…"), and
//   whatever does not fit a budget is dropped as whole items, from the end;
// - every change made to the items (reordered, moved to 0:00, dropped for
//   spacing, for the end of the recording or for the budget, shortened, link
//   or hashtag removed) adds one warning line, as does a violated hard rule
//   that makes ok_to_paste false; warnings is empty when the items appear
//   verbatim;
// - truncated is true only when a size limit (maxChars, maxPosts,
//   maxChapters) dropped items; items dropped for spacing are merges, not
//   truncation, though they too make items_used < items_total.
namespace scribe::posting {

// Appended to quoted_sections output when cta=true and the caller passes no
// cta_text. Plain text without a URL, so it fits every format unchanged.
inline constexpr std::string_view kDefaultCta = "Transcribed and chaptered with scribe.";

// One input item, in time order.
struct Item {
  double start_seconds = 0;
  std::string title;                   // chapter title, or insight_title for quoted_sections
  std::optional<std::string> quote;    // quoted_sections only (verbatim transcript text)
  std::optional<std::string> summary;  // show_notes (chapter summaries)
  std::string url;                     // deep link to this moment; empty when the source has none
};

struct RenderRequest {
  // video_site | audio_app_a | audio_app_b | markdown | short_post | thread_post | photo_caption |
  // professional_post | plain. Ignored for the variants show_notes and original.
  std::string format;
  std::string variant;  // standard | highlights | clips | quoted_sections | show_notes | original
  // Appends the call-to-action footer, to quoted_sections only: the other
  // variants are chapter lists, where a footer would read as a chapter (so it
  // is ignored there, without a warning).
  bool cta = false;
  std::vector<Item> items;
  double duration_seconds = 0;  // of the recording; <= 0 when unknown (end-of-recording rules are skipped)
  // The transcription title ("" when none): the heading of show_notes, photo_caption, professional_post and the
  // two post formats; the chapter-line, markdown and plain formats have none.
  std::string title;
  std::string cta_text;  // "" means kDefaultCta
};

struct Rendered {
  std::string text;                                // paste-ready, no trailing newline
  std::optional<std::vector<std::string>> thread;  // short_post and thread_post only: the posts
  int char_count = 0;                              // of text, in Unicode code points
  int items_used = 0;
  int items_total = 0;
  bool truncated = false;
  bool ok_to_paste = false;
  std::vector<std::string> warnings;
  std::optional<Json> constraints;  // nullopt for show_notes and original
};

// How a timestamp is written.
enum class TimestampStyle {
  kShortest,         // 0:00, 12:34, 1:02:03
  kTwoDigitMinutes,  // 00:00, 12:34, 1:02:03
  kMinutesOnly,      // 00:00, 12:34, 75:30 (minutes may exceed 59)
  kAlwaysHours,      // 00:00:00, 01:02:03
};

// How the items are laid out.
enum class Layout {
  kChapterLines,   // "0:00 Title": platforms that turn such lines into chapters
  kMarkdownLinks,  // "- [00:00](url) Title"
  kPosts,          // "00:00 Title url" lines packed into numbered posts
  kCaption,        // heading, then "00:00 Title" lines
  kParagraphs,     // heading paragraph, then one "Title (00:00)" paragraph per item
  kPlainLines,     // "00:00 Title"
};

// How a platform counts characters. The defaults count Unicode code points.
struct Weights {
  int url_weight = 0;        // > 0: every http(s):// or www. token counts this much, whatever its length
  int wide_char_weight = 1;  // > 1: code points outside the narrow ranges of the short-post platform count this
};

// One platform's rules. A 0 limit means the platform has none.
struct Platform {
  std::string_view format;
  std::string_view label;
  Layout layout = Layout::kPlainLines;
  TimestampStyle timestamps = TimestampStyle::kTwoDigitMinutes;
  int max_chars = 0;  // the whole text, or each post for Layout::kPosts
  int max_posts = 0;  // Layout::kPosts only
  int min_chapters = 0;
  int max_chapters = 0;
  bool first_must_be_zero = false;
  int min_spacing_seconds = 0;  // between consecutive items, and from the last one to the end of the recording
  int title_cap = 0;            // code points of one title
  bool allows_urls = true;      // false: links are stripped from titles, quotes, heading and footer
  bool allows_hashtags = true;  // false: the '#' of "#word" is removed
  bool item_links = false;      // each item carries its deep link
  Weights weights{};
};

// The table, one row per format, in the order of the spec.
const std::vector<Platform>& platforms();
const Platform* find_platform(std::string_view format);

bool is_format(const std::string& format);
bool is_variant(const std::string& variant);
// clip_ideas, show_notes and original, which were once format values: the
// caller answers 400 invalid_request pointing at `variant`.
bool is_legacy_format(const std::string& format);

// The `constraints` object of a format (camelCase keys: label, maxChars,
// maxCharsPer, maxPosts, minChapters, maxChapters, firstMustBeZero,
// minSpacingSeconds, titleCap, timestampStyle, allowsUrls, allowsHashtags,
// itemLinks, urlWeight, wideCharWeight; a limit the platform lacks is null).
// A JSON null for an unknown format.
const Json& constraints_of(const std::string& format);
Json constraints_json(const Platform& p);

// Renders r.items under the rules of r.format. Throws std::invalid_argument
// for an unknown variant, or an unknown format with a variant that uses it
// (the caller checks is_format and is_variant first and answers 400).
Rendered render(const RenderRequest& r);
// The same under explicit rules (r.format is then only a name): for tests,
// and for trying out a new platform row.
Rendered render_with(const RenderRequest& r, const Platform& p);

// Text helpers the rendering is built from (posting_formats_text.cpp).

// `seconds` (negative counts as 0) in the given style.
std::string format_timestamp(int seconds, TimestampStyle style);
// The style as the constraints object names it, e.g. "M:SS or H:MM:SS".
std::string_view timestamp_style_name(TimestampStyle style);
// Length of UTF-8 `text` as a platform counts it.
std::size_t weighted_length(std::string_view text, const Weights& w = {});
// `text` when it weighs at most `max`; else its longest prefix that ends at
// whitespace, without trailing separators, followed by "…", weighing at most
// `max`; nullopt when not even the first word fits.
std::optional<std::string> shorten_at_word(std::string_view text, std::size_t max, const Weights& w = {});
// Control characters become spaces, runs of ASCII whitespace one space, ends trimmed:
// a title with a line break would otherwise break a line-based list.
std::string collapse_whitespace(std::string_view s);
// Whether a word (text without whitespace) holds something a platform would
// render as a link, judged on its Unicode-folded form: a URL of any scheme
// ("ftp://..."), a scheme token followed by something ("mailto:a@b.c",
// "javascript:...", "data:...", "tel:..."), a "www." host, a domain name
// ending in a known top-level domain, with or without a path, port or query
// ("evil.com/path", "evil.co.uk", "café.de:8080"), or an e-mail address.
// Ordinary dotted words are not: "e.g.", "3.5", "Mr.", "Node.js",
// "talk.mp3", "JavaScript:" (nothing after the colon). A word ending in a
// real top-level domain is, as platforms would link it: "ASP.NET",
// "clip.mov", "Socket.IO" (posting_formats_links.cpp has the table).
bool holds_link(std::string_view word);
// Removes every word holding a link from collapsed text (words are separated
// by ASCII whitespace and the Unicode spaces); returns how many.
int strip_urls(std::string& text);
// Removes the '#' of every token "#word" (a letter after the '#', so "#1" and
// "C#" stay) from collapsed text; returns how many.
int strip_hashtags(std::string& text);

}  // namespace scribe::posting
