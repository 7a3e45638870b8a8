// Posts, captions, text helpers, the CTA and the format-independent variants
// (the table and the chapter platforms are in posting_formats_test.cpp).
#include <gtest/gtest.h>

#include "common/text.h"
#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

bool any_warning(const Rendered& out, std::string_view part) {
  for (const auto& w : out.warnings)
    if (has(w, part)) return true;
  return false;
}

std::vector<Item> items_with(int n, const std::string& title, const std::string& url_tail = "", int step = 60) {
  std::vector<Item> items;
  for (int i = 0; i < n; ++i)
    items.push_back({i * static_cast<double>(step), title + " " + std::to_string(i + 1), "Quote " + std::to_string(i),
                     "Summary " + std::to_string(i),
                     "https://example.com/v" + url_tail + "?t=" + std::to_string(i * step)});
  return items;
}

RenderRequest request(std::string format, std::string variant, std::vector<Item> items) {
  RenderRequest r;
  r.format = std::move(format);
  r.variant = std::move(variant);
  r.items = std::move(items);
  r.duration_seconds = 100000;
  return r;
}

const Weights kShortPostWeights = find_platform("short_post")->weights;

TEST(PostingText, UrlsCountAsTwentyThreeAndWideCharactersTwiceInShortPosts) {
  const std::string url = "https://example.com/" + std::string(200, 'a');
  EXPECT_EQ(weighted_length(url, kShortPostWeights), 23u);
  EXPECT_EQ(weighted_length("see " + url + " now", kShortPostWeights), 4u + 23u + 4u);
  EXPECT_EQ(weighted_length("(www.example.com)", kShortPostWeights), 1u + 23u);
  EXPECT_EQ(weighted_length("xhttp://a", kShortPostWeights), 9u);  // not a link: no word starts there
  EXPECT_EQ(weighted_length("Café — über", kShortPostWeights), 11u);
  EXPECT_EQ(weighted_length("日本語", kShortPostWeights), 6u);
  EXPECT_EQ(weighted_length("日本語"), 3u);
  EXPECT_EQ(weighted_length(url), utf8_length(url));
}

TEST(PostingText, ShortenAtWordNeverCutsAWordOrASequence) {
  const std::string title = "Café über Straße und naïve Résumés";
  EXPECT_EQ(shorten_at_word(title, 100), title);
  EXPECT_EQ(shorten_at_word(title, 12), "Café über…");
  EXPECT_EQ(shorten_at_word(title, 17), "Café über Straße…");
  EXPECT_EQ(shorten_at_word("Budget, staffing and more", 17), "Budget, staffing…");
  EXPECT_EQ(shorten_at_word("Budget, staffing and more", 12), "Budget…");
  EXPECT_EQ(shorten_at_word("Intro \u2014 the plan", 10), "Intro…");
  EXPECT_EQ(shorten_at_word("Donaudampfschifffahrt ist lang", 10), std::nullopt);
  for (std::size_t max = 0; max < 40; ++max) {
    const auto s = shorten_at_word(title, max);
    if (!s) continue;
    EXPECT_TRUE(is_valid_utf8(*s));
    EXPECT_LE(utf8_length(*s), max);
    const std::string kept = s->ends_with("…") ? s->substr(0, s->size() - 3) : *s;
    EXPECT_TRUE(title.starts_with(kept));
    EXPECT_TRUE(kept.size() == title.size() || title[kept.size()] == ' ') << *s;
  }
}

TEST(PostingText, CollapseAndStrip) {
  EXPECT_EQ(collapse_whitespace("  a\n b\t\tc \x7f"), "a b c");
  std::string t = "Read https://a.b/c and www.x.org or (http://y.z) now";
  EXPECT_EQ(strip_urls(t), 3);
  EXPECT_EQ(t, "Read and or now");
  std::string h = "#AI for #Café teams, C# and #1 #";
  EXPECT_EQ(strip_hashtags(h), 2);
  EXPECT_EQ(h, "AI for Café teams, C# and #1 #");
}

TEST(PostingFormats, ShortPostCountsEveryUrlAsTwentyThree) {
  // Each line has a 150-character link: by real length two lines exceed 280,
  // counted as the platform counts them several fit one post.
  const Rendered out = render(request("short_post", "standard", items_with(12, "Topic", "/" + std::string(130, 'x'))));
  ASSERT_TRUE(out.thread);
  EXPECT_GT(out.thread->size(), 1u);
  bool over_280_in_code_points = false;
  for (const auto& post : *out.thread) {
    EXPECT_LE(weighted_length(post, kShortPostWeights), 280u) << post;
    over_280_in_code_points = over_280_in_code_points || utf8_length(post) > 280;
  }
  EXPECT_TRUE(over_280_in_code_points);
  EXPECT_EQ(out.items_used, 12);
  EXPECT_TRUE(out.ok_to_paste);
  EXPECT_EQ(out.char_count, static_cast<int>(utf8_length(out.text)));
}

TEST(PostingFormats, ThreadPostsAreNumberedAndEachWithinTheLimit) {
  const Rendered out =
      render(request("thread_post", "standard", items_with(30, std::string(70, 'w') + " a fairly long title")));
  ASSERT_TRUE(out.thread);
  const std::size_t n = out.thread->size();
  ASSERT_GT(n, 3u);
  for (std::size_t k = 0; k < n; ++k) {
    const std::string& post = (*out.thread)[k];
    EXPECT_LE(utf8_length(post), 500u);
    EXPECT_TRUE(post.starts_with(std::to_string(k + 1) + "/" + std::to_string(n) + "\n")) << post;
  }
  EXPECT_EQ(out.items_used, 30);
  EXPECT_FALSE(out.truncated);
  // Lines are whole: every item's line appears intact in some post.
  EXPECT_TRUE(has(out.text, "00:00 " + std::string(70, 'w') + " a fairly long title 1 https://example.com/v?t=0"));
}

TEST(PostingFormats, OnePostNeedsNoNumbering) {
  const Rendered out = render(request("thread_post", "standard", items_with(3, "Short")));
  ASSERT_TRUE(out.thread);
  ASSERT_EQ(out.thread->size(), 1u);
  EXPECT_TRUE(out.text.starts_with("00:00 Short 1 https://example.com/v?t=0\n"));
}

TEST(PostingFormats, TooManyPostsTruncateTheThread) {
  const Rendered out = render(request("short_post", "standard", items_with(200, std::string(150, 'z'))));
  ASSERT_TRUE(out.thread);
  EXPECT_LE(out.thread->size(), 25u);
  EXPECT_TRUE(out.truncated);
  EXPECT_LT(out.items_used, 200);
  EXPECT_TRUE(any_warning(out, "25 posts"));
  EXPECT_TRUE(out.ok_to_paste);
}

TEST(PostingFormats, LongQuotesAreShortenedToFitAPost) {
  auto items = items_with(3, "Insight");
  std::string quote;
  for (int i = 0; i < 80; ++i) quote += "wörd" + std::to_string(i) + " ";
  items[1].quote = quote;
  const Rendered out = render(request("short_post", "quoted_sections", items));
  ASSERT_TRUE(out.thread);
  for (const auto& post : *out.thread) EXPECT_LE(weighted_length(post, kShortPostWeights), 280u);
  EXPECT_TRUE(has(out.text, "\"wörd0 wörd1 "));
  EXPECT_TRUE(has(out.text, "…\""));
  EXPECT_TRUE(is_valid_utf8(out.text));
  EXPECT_TRUE(any_warning(out, "shortened the quote at 01:00"));
  EXPECT_EQ(out.items_used, 3);
}

TEST(PostingFormats, OnlyTheItemsUsedReportTheirShortening) {
  auto items = items_with(200, "Insight");
  // Built with append: GCC 12 at -O2 misreads `std::string(300, 'q') + "..."` (-Warray-bounds).
  std::string quote(300, 'q');
  quote.append(" tail of a quote");
  for (auto& item : items) item.quote = quote;
  const Rendered out = render(request("short_post", "quoted_sections", items));
  EXPECT_TRUE(out.truncated);
  // One "shortened"/"left out" line per used item, and the truncation line.
  EXPECT_EQ(out.warnings.size(), static_cast<std::size_t>(out.items_used) + 1);
  EXPECT_TRUE(out.warnings.back().starts_with("dropped " + std::to_string(200 - out.items_used) + " items from "));
}

TEST(PostingFormats, PhotoCaptionHasNoLinksAtAll) {
  auto items = items_with(4, "See https://example.com/more about");
  items[0].quote = "as said on www.example.org today";
  auto r = request("photo_caption", "quoted_sections", items);
  r.title = "Talk https://example.com/talk";
  r.cta = true;
  r.cta_text = "Try it: https://scribe.example/try";
  const Rendered out = render(r);
  EXPECT_FALSE(has(out.text, "http"));
  EXPECT_FALSE(has(out.text, "www."));
  EXPECT_TRUE(out.text.starts_with("Talk\n\n00:00 See about 1 — \"as said on today\""));
  EXPECT_TRUE(out.text.ends_with("\n\nTry it:"));
  EXPECT_TRUE(any_warning(out, "left out 4 item links"));
  EXPECT_TRUE(any_warning(out, "removed a link from the title at 00:00"));
  EXPECT_TRUE(any_warning(out, "removed a link from the call-to-action footer"));
  EXPECT_LE(out.char_count, 2200);
  EXPECT_TRUE(out.ok_to_paste);
}

TEST(PostingFormats, ProfessionalPostIsParagraphsWithInlineTimesAndNoLinksOrHashtags) {
  auto items = items_with(3, "#Budget planning https://example.com/x");
  items[2].start_seconds = 4530;
  auto r = request("professional_post", "standard", items);
  r.title = "Review #Q3";
  const Rendered out = render(r);
  EXPECT_FALSE(has(out.text, "http"));
  EXPECT_FALSE(has(out.text, "#"));
  EXPECT_EQ(out.text,
            "Review Q3\n\nBudget planning 1 (00:00)\n\nBudget planning 2 (01:00)\n\nBudget planning 3 (1:15:30)");
  EXPECT_TRUE(any_warning(out, "allows no hashtags"));
  EXPECT_LE(out.char_count, 3000);
  EXPECT_FALSE(out.thread);
}

TEST(PostingFormats, ProfessionalPostKeepsWithinThreeThousand) {
  const Rendered out = render(request("professional_post", "standard", items_with(100, std::string(60, 'p'))));
  EXPECT_LE(out.char_count, 3000);
  EXPECT_TRUE(out.truncated);
  EXPECT_LT(out.items_used, 100);
}

TEST(PostingFormats, Utf8TitlesAreShortenedOnlyAtWordBoundaries) {
  std::string title = "Café über Straße";
  while (utf8_length(title) < 140) title += " naïve Résumé";
  const Rendered out = render(request("video_site", "standard", items_with(3, title)));
  EXPECT_TRUE(is_valid_utf8(out.text));
  EXPECT_TRUE(out.ok_to_paste);
  const std::string first = out.text.substr(0, out.text.find('\n'));
  EXPECT_TRUE(first.starts_with("0:00 Café über Straße naïve Résumé"));
  EXPECT_TRUE(first.ends_with("Résumé…")) << first;
  EXPECT_LE(utf8_length(first), 5u + 100u);
  EXPECT_TRUE(any_warning(out, "shortened the title at 0:00 at a word boundary to 100 characters"));
}

TEST(PostingFormats, ATitleWithoutWordBoundaryStaysWhole) {
  const std::string word(120, 'x');
  const Rendered out = render(request("video_site", "standard", items_with(3, word)));
  EXPECT_TRUE(has(out.text, word + " 1"));
  EXPECT_TRUE(any_warning(out, "no word boundary"));
}

TEST(PostingFormats, TheCtaIsAppendedToQuotedSectionsOnly) {
  for (const std::string format : {"video_site", "markdown", "short_post", "photo_caption", "professional_post"}) {
    auto r = request(format, "quoted_sections", items_with(3, "Insight"));
    r.cta = true;
    EXPECT_TRUE(render(r).text.ends_with(std::string(kDefaultCta))) << format;
    r.cta_text = "Subscribe for more.";
    EXPECT_TRUE(render(r).text.ends_with("\n\nSubscribe for more.")) << format;
    r.cta = false;
    EXPECT_FALSE(has(render(r).text, "Subscribe")) << format;
    r.cta = true;
    for (const std::string variant : {"standard", "highlights", "clips", "show_notes", "original"}) {
      r.variant = variant;
      const Rendered out = render(r);
      EXPECT_FALSE(has(out.text, "Subscribe")) << format << " " << variant;
      EXPECT_TRUE(out.warnings.empty() || format == "photo_caption" || format == "professional_post");
    }
  }
}

TEST(PostingFormats, QuotedSectionsShowTitleAndQuote) {
  auto r = request("video_site", "quoted_sections", items_with(3, "Insight"));
  EXPECT_TRUE(render(r).text.starts_with("0:00 Insight 1 — \"Quote 0\"\n1:00 Insight 2 — \"Quote 1\""));
  r.format = "professional_post";
  EXPECT_TRUE(render(r).text.starts_with("Insight 1 (00:00): \"Quote 0\"\n\nInsight 2 (01:00)"));
  r.format = "markdown";
  EXPECT_TRUE(render(r).text.starts_with("- [00:00](https://example.com/v?t=0) Insight 1 — \"Quote 0\"\n"));
}

TEST(PostingFormats, ShowNotesArePerChapterMarkdownWhateverTheFormat) {
  auto r = request("short_post", "show_notes", items_with(2, "Part"));
  r.title = "Episode 12";
  const Rendered out = render(r);
  EXPECT_EQ(out.text, "# Episode 12\n\n## 00:00 Part 1\n\nSummary 0\n\n## 01:00 Part 2\n\nSummary 1");
  EXPECT_FALSE(out.constraints);
  EXPECT_FALSE(out.thread);
  EXPECT_TRUE(out.ok_to_paste);
  r.format = "not-a-format";  // ignored
  EXPECT_EQ(render(r).text, out.text);
}

TEST(PostingFormats, OriginalIsTheRawSectionList) {
  auto items = items_with(2, "Section\nwith break");
  items[1].start_seconds = 3723;
  const Rendered out = render(request("video_site", "original", items));
  EXPECT_EQ(out.text, "00:00 Section with break 1\n1:02:03 Section with break 2");
  EXPECT_FALSE(out.constraints);
  EXPECT_EQ(out.items_used, 2);
}

TEST(PostingFormats, NoItemsIsNothingToPaste) {
  for (const std::string variant : {"standard", "quoted_sections", "show_notes", "original"}) {
    auto r = request("short_post", variant, {});
    r.title = "T";
    r.cta = true;
    const Rendered out = render(r);
    EXPECT_EQ(out.text, "") << variant;
    EXPECT_FALSE(out.ok_to_paste);
    EXPECT_EQ(out.items_used, 0);
  }
}

TEST(PostingFormats, UntitledItemsAreDropped) {
  auto items = items_with(4, "T");
  items[1].title = " \n ";
  const Rendered out = render(request("plain", "standard", items));
  EXPECT_EQ(out.items_used, 3);
  EXPECT_TRUE(any_warning(out, "no title"));
}

TEST(PostingFormats, MaxChaptersFromTheTableIsEnforced) {
  Platform p = *find_platform("video_site");
  p.max_chapters = 4;
  const Rendered out = render_with(request("video_site", "standard", items_with(6, "C")), p);
  EXPECT_EQ(out.items_used, 4);
  EXPECT_TRUE(out.truncated);
  EXPECT_TRUE(any_warning(out, "at most 4 chapters"));
  EXPECT_EQ((*out.constraints)["maxChapters"], 4);
}

TEST(PostingFormats, NamesAndConstraints) {
  for (const auto& p : platforms()) EXPECT_TRUE(is_format(std::string(p.format)));
  EXPECT_EQ(platforms().size(), 9u);
  EXPECT_FALSE(is_format("clip_ideas"));
  EXPECT_TRUE(is_legacy_format("clip_ideas"));
  EXPECT_TRUE(is_legacy_format("show_notes"));
  EXPECT_TRUE(is_legacy_format("original"));
  EXPECT_FALSE(is_legacy_format("plain"));
  EXPECT_TRUE(is_variant("quoted_sections"));
  EXPECT_FALSE(is_variant("balanced"));
  EXPECT_THROW(render(request("clip_ideas", "standard", {})), std::invalid_argument);
  EXPECT_THROW(render(request("plain", "balanced", {})), std::invalid_argument);

  const Json& video = constraints_of("video_site");
  EXPECT_EQ(video["maxChars"], 5000);
  EXPECT_EQ(video["minChapters"], 3);
  EXPECT_EQ(video["firstMustBeZero"], true);
  EXPECT_EQ(video["minSpacingSeconds"], 10);
  EXPECT_EQ(video["titleCap"], 100);
  EXPECT_EQ(video["label"], "Video site chapters");
  EXPECT_EQ(video["timestampStyle"], "M:SS or H:MM:SS");
  EXPECT_TRUE(video["maxChapters"].is_null());
  const Json& short_post = constraints_of("short_post");
  EXPECT_EQ(short_post["maxChars"], 280);
  EXPECT_EQ(short_post["maxCharsPer"], "post");
  EXPECT_EQ(short_post["urlWeight"], 23);
  EXPECT_EQ(short_post["wideCharWeight"], 2);
  EXPECT_EQ(constraints_of("thread_post")["maxChars"], 500);
  EXPECT_TRUE(constraints_of("thread_post")["urlWeight"].is_null());
  EXPECT_EQ(constraints_of("professional_post")["allowsHashtags"], false);
  EXPECT_EQ(constraints_of("photo_caption")["allowsUrls"], false);
  EXPECT_EQ(constraints_of("photo_caption")["maxChars"], 2200);
  EXPECT_EQ(constraints_of("audio_app_b")["timestampStyle"], "HH:MM:SS");
  EXPECT_TRUE(constraints_of("markdown")["maxChars"].is_null());
  EXPECT_TRUE(constraints_of("nope").is_null());
}

}  // namespace
}  // namespace scribe::posting
