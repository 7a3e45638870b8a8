// The platform table of posting_formats: every rule as data, and the
// constraints object the API returns for each format.
#include <algorithm>
#include <array>
#include <map>

#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

constexpr std::array<std::string_view, 6> kVariants = {"standard",        "highlights", "clips",
                                                       "quoted_sections", "show_notes", "original"};
constexpr std::array<std::string_view, 3> kLegacyFormats = {"clip_ideas", "show_notes", "original"};

}  // namespace

const std::vector<Platform>& platforms() {
  // Budgets: the usual video description limit (5000), the episode
  // description limit of the two podcast apps (4000), the short-post and
  // thread-post limits (280 with links counted as 23, and 500), the photo
  // caption limit (2200) and the professional post limit (3000). Title caps
  // and the 25-post thread cap are readability choices of this service.
  static const std::vector<Platform> table = {
      {.format = "video_site",
       .label = "Video site chapters",
       .layout = Layout::kChapterLines,
       .timestamps = TimestampStyle::kShortest,
       .max_chars = 5000,
       .min_chapters = 3,
       .first_must_be_zero = true,
       .min_spacing_seconds = 10,
       .title_cap = 100},
      {.format = "audio_app_a",
       .label = "Podcast app A chapters",
       .layout = Layout::kChapterLines,
       .timestamps = TimestampStyle::kMinutesOnly,
       .max_chars = 4000,
       .min_chapters = 3,
       .first_must_be_zero = true,
       .min_spacing_seconds = 10,
       .title_cap = 80},
      {.format = "audio_app_b",
       .label = "Podcast app B chapters",
       .layout = Layout::kChapterLines,
       .timestamps = TimestampStyle::kAlwaysHours,
       .max_chars = 4000,
       .min_chapters = 3,
       .first_must_be_zero = true,
       .min_spacing_seconds = 10,
       .title_cap = 80},
      {.format = "markdown",
       .label = "Markdown list",
       .layout = Layout::kMarkdownLinks,
       .timestamps = TimestampStyle::kTwoDigitMinutes,
       .item_links = true},
      {.format = "short_post",
       .label = "Short post thread",
       .layout = Layout::kPosts,
       .timestamps = TimestampStyle::kTwoDigitMinutes,
       .max_chars = 280,
       .max_posts = 25,
       .title_cap = 100,
       .item_links = true,
       .weights = {.url_weight = 23, .wide_char_weight = 2}},
      {.format = "thread_post",
       .label = "Thread post",
       .layout = Layout::kPosts,
       .timestamps = TimestampStyle::kTwoDigitMinutes,
       .max_chars = 500,
       .max_posts = 25,
       .title_cap = 150,
       .item_links = true},
      {.format = "photo_caption",
       .label = "Photo caption",
       .layout = Layout::kCaption,
       .timestamps = TimestampStyle::kTwoDigitMinutes,
       .max_chars = 2200,
       .title_cap = 100,
       .allows_urls = false},
      {.format = "professional_post",
       .label = "Professional network post",
       .layout = Layout::kParagraphs,
       .timestamps = TimestampStyle::kTwoDigitMinutes,
       .max_chars = 3000,
       .title_cap = 150,
       .allows_urls = false,
       .allows_hashtags = false},
      {.format = "plain",
       .label = "Plain text",
       .layout = Layout::kPlainLines,
       .timestamps = TimestampStyle::kTwoDigitMinutes},
  };
  return table;
}

const Platform* find_platform(std::string_view format) {
  for (const Platform& p : platforms())
    if (p.format == format) return &p;
  return nullptr;
}

bool is_format(const std::string& format) { return find_platform(format) != nullptr; }

bool is_variant(const std::string& variant) {
  return std::find(kVariants.begin(), kVariants.end(), variant) != kVariants.end();
}

bool is_legacy_format(const std::string& format) {
  return std::find(kLegacyFormats.begin(), kLegacyFormats.end(), format) != kLegacyFormats.end();
}

Json constraints_json(const Platform& p) {
  const auto limit = [](int v) { return v > 0 ? Json(v) : Json(nullptr); };
  return Json{
      {"label", std::string(p.label)},
      {"maxChars", limit(p.max_chars)},
      {"maxCharsPer", p.max_chars <= 0 ? Json(nullptr) : Json(p.layout == Layout::kPosts ? "post" : "text")},
      {"maxPosts", limit(p.max_posts)},
      {"minChapters", limit(p.min_chapters)},
      {"maxChapters", limit(p.max_chapters)},
      {"firstMustBeZero", p.first_must_be_zero},
      {"minSpacingSeconds", std::max(p.min_spacing_seconds, 0)},
      {"titleCap", limit(p.title_cap)},
      {"timestampStyle", std::string(timestamp_style_name(p.timestamps))},
      {"allowsUrls", p.allows_urls},
      {"allowsHashtags", p.allows_hashtags},
      {"itemLinks", p.item_links},
      {"urlWeight", limit(p.weights.url_weight)},
      {"wideCharWeight", std::max(p.weights.wide_char_weight, 1)},
  };
}

const Json& constraints_of(const std::string& format) {
  static const std::map<std::string, Json, std::less<>> by_format = [] {
    std::map<std::string, Json, std::less<>> m;
    for (const Platform& p : platforms()) m.emplace(std::string(p.format), constraints_json(p));
    return m;
  }();
  static const Json kNone;
  const auto it = by_format.find(format);
  return it == by_format.end() ? kNone : it->second;
}

}  // namespace scribe::posting
