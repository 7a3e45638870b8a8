#include "domain/posting_formats.h"

#include <gtest/gtest.h>

#include <tuple>

#include "common/text.h"

namespace scribe::posting {
namespace {

constexpr double kDuration = 1200;

// Ten chapters 95 s apart, each with a link, a short quote and a summary: a
// normal input that every format renders without changing anything.
std::vector<Item> sample(int n = 10, int step = 95) {
  std::vector<Item> items;
  for (int i = 0; i < n; ++i) {
    const int at = i * step;
    items.push_back({static_cast<double>(at), "Chapter " + std::to_string(i + 1) + " on budgets",
                     "We spent less than planned in part " + std::to_string(i + 1) + ".",
                     "Summary of part " + std::to_string(i + 1) + ".",
                     "https://example.com/watch?v=abc&t=" + std::to_string(at)});
  }
  return items;
}

RenderRequest request(std::string format, std::string variant, std::vector<Item> items = sample()) {
  RenderRequest r;
  r.format = std::move(format);
  r.variant = std::move(variant);
  r.items = std::move(items);
  r.duration_seconds = kDuration;
  r.title = "Quarterly budget review";
  return r;
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

bool any_warning(const Rendered& out, std::string_view part) {
  for (const auto& w : out.warnings)
    if (has(w, part)) return true;
  return false;
}

const std::vector<std::string> kFormats = {"video_site",    "audio_app_a",       "audio_app_b",
                                           "markdown",      "short_post",        "thread_post",
                                           "photo_caption", "professional_post", "plain"};
const std::vector<std::string> kVariantNames = {"standard",        "highlights", "clips",
                                                "quoted_sections", "show_notes", "original"};

class EveryFormatAndVariant : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryFormatAndVariant, RendersANormalInputWithinTheRules) {
  const auto& [format, variant] = GetParam();
  const Rendered out = render(request(format, variant));
  const bool own_layout = variant == "show_notes" || variant == "original";
  const Platform& p = *find_platform(format);

  EXPECT_FALSE(out.text.empty());
  EXPECT_TRUE(is_valid_utf8(out.text));
  EXPECT_EQ(out.char_count, static_cast<int>(utf8_length(out.text)));
  EXPECT_EQ(out.items_total, 10);
  EXPECT_EQ(out.items_used, 10);
  EXPECT_FALSE(out.truncated);
  EXPECT_TRUE(out.ok_to_paste);
  EXPECT_FALSE(out.text.ends_with("\n"));
  EXPECT_EQ(out.constraints.has_value(), !own_layout);
  EXPECT_EQ(out.thread.has_value(), !own_layout && p.layout == Layout::kPosts);
  if (own_layout) {
    EXPECT_TRUE(out.warnings.empty());
    // The format is ignored: the same text for every format.
    EXPECT_EQ(out.text, render(request("plain", variant)).text);
    return;
  }
  EXPECT_EQ(*out.constraints, constraints_of(format));
  // Only the formats without links say that they left the items' links out.
  EXPECT_EQ(out.warnings.size(), p.allows_urls ? 0u : 1u) << (out.warnings.empty() ? "" : out.warnings.front());
  EXPECT_EQ(has(out.text, "http"), p.item_links);
  EXPECT_EQ(has(out.text, "https://example.com/watch?v=abc&t=95"), p.item_links);
  EXPECT_EQ(has(out.text, "We spent less"), variant == "quoted_sections");
  if (out.thread) {
    EXPECT_EQ(out.text, [&] {
      std::string joined;
      for (const auto& post : *out.thread) joined += (joined.empty() ? "" : "\n\n") + post;
      return joined;
    }());
    for (const auto& post : *out.thread) EXPECT_LE(weighted_length(post, p.weights), 0u + p.max_chars) << post;
  } else if (p.max_chars > 0) {
    EXPECT_LE(out.char_count, p.max_chars);
  }
}

INSTANTIATE_TEST_SUITE_P(PostingFormats, EveryFormatAndVariant,
                         testing::Combine(testing::ValuesIn(kFormats), testing::ValuesIn(kVariantNames)),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST(PostingFormats, VideoSiteLinesAreTimestampAndTitle) {
  const Rendered out = render(request("video_site", "standard", sample(3)));
  EXPECT_EQ(out.text, "0:00 Chapter 1 on budgets\n1:35 Chapter 2 on budgets\n3:10 Chapter 3 on budgets");
  EXPECT_TRUE(out.ok_to_paste);
}

TEST(PostingFormats, VideoSiteMovesTheFirstChapterToZeroAndWarns) {
  auto items = sample(3);
  items[0].start_seconds = 12.7;
  const Rendered out = render(request("video_site", "standard", items));
  EXPECT_TRUE(out.text.starts_with("0:00 Chapter 1 on budgets\n"));
  ASSERT_EQ(out.warnings.size(), 1u);
  EXPECT_TRUE(has(out.warnings[0], "from 0:12 to 0:00")) << out.warnings[0];
  EXPECT_TRUE(out.ok_to_paste);
  EXPECT_EQ(out.items_used, 3);
}

TEST(PostingFormats, FewerThanThreeChaptersIsNotOkToPasteButStillRendered) {
  for (const std::string format : {"video_site", "audio_app_a", "audio_app_b"}) {
    const Rendered out = render(request(format, "standard", sample(2)));
    EXPECT_FALSE(out.ok_to_paste) << format;
    EXPECT_FALSE(out.text.empty());
    EXPECT_EQ(out.items_used, 2);
    EXPECT_TRUE(any_warning(out, "needs at least 3")) << format;
  }
  // Lists that are not platform chapters have no minimum.
  EXPECT_TRUE(render(request("markdown", "standard", sample(2))).ok_to_paste);
}

TEST(PostingFormats, ChaptersCloserThanTheSpacingAreMerged) {
  std::vector<Item> items;
  for (int at : {0, 5, 20, 25, 40}) items.push_back({static_cast<double>(at), "At " + std::to_string(at), {}, {}, ""});
  const Rendered out = render(request("video_site", "standard", items));
  EXPECT_EQ(out.text, "0:00 At 0\n0:20 At 20\n0:40 At 40");
  EXPECT_EQ(out.items_used, 3);
  EXPECT_EQ(out.items_total, 5);
  EXPECT_FALSE(out.truncated);
  ASSERT_EQ(out.warnings.size(), 2u);
  EXPECT_TRUE(has(out.warnings[0], "0:05 into the one at 0:00")) << out.warnings[0];
  EXPECT_TRUE(out.ok_to_paste);
}

TEST(PostingFormats, ALastChapterShorterThanTheSpacingIsMerged) {
  auto r = request("video_site", "standard", sample(4, 20));  // 0, 20, 40, 60
  r.duration_seconds = 65;
  const Rendered out = render(r);
  EXPECT_EQ(out.items_used, 3);
  EXPECT_FALSE(has(out.text, "1:00"));
  EXPECT_TRUE(any_warning(out, "before the end of the recording"));
}

TEST(PostingFormats, ItemsAfterTheEndOfTheRecordingAreDropped) {
  auto r = request("plain", "standard", sample(4));
  r.duration_seconds = 200;  // items at 0, 95, 190, 285
  const Rendered out = render(r);
  EXPECT_EQ(out.items_used, 3);
  EXPECT_TRUE(any_warning(out, "after the end of the recording"));
}

TEST(PostingFormats, UnsortedItemsAreSortedWithAWarning) {
  auto items = sample(3);
  std::swap(items[1], items[2]);
  const Rendered out = render(request("plain", "standard", items));
  EXPECT_EQ(out.text, "00:00 Chapter 1 on budgets\n01:35 Chapter 2 on budgets\n03:10 Chapter 3 on budgets");
  EXPECT_TRUE(any_warning(out, "time order"));
}

TEST(PostingFormats, TheBudgetDropsItemsFromTheEnd) {
  std::vector<Item> items;
  for (int i = 0; i < 200; ++i)
    items.push_back(
        {i * 20.0, "A rather long chapter title number " + std::to_string(i) + " about things", {}, {}, ""});
  auto r = request("video_site", "standard", items);
  r.duration_seconds = 5000;
  const Rendered out = render(r);
  EXPECT_TRUE(out.truncated);
  EXPECT_LT(out.items_used, out.items_total);
  EXPECT_GT(out.items_used, 3);
  EXPECT_LE(out.char_count, 5000);
  EXPECT_TRUE(out.ok_to_paste);
  EXPECT_TRUE(out.text.ends_with("about things"));  // whole lines only
  EXPECT_TRUE(any_warning(out, "5000-character budget"));
  // The next line would not have fitted.
  const std::string next = "\n" + format_timestamp(out.items_used * 20, TimestampStyle::kShortest) + " " +
                           items[static_cast<std::size_t>(out.items_used)].title;
  EXPECT_GT(out.char_count + utf8_length(next), 5000u);
}

TEST(PostingFormats, AQuoteLongerThanTheBudgetIsShortenedToWhatIsLeft) {
  auto items = sample(3);
  std::string quote;
  while (quote.size() < 7000) quote += "naïve words again ";
  items[1].quote = quote;
  const Rendered out = render(request("video_site", "quoted_sections", items));
  EXPECT_LE(out.char_count, 5000);
  EXPECT_GT(out.char_count, 4900);
  EXPECT_EQ(out.items_used, 2);  // the third no longer fits after it
  EXPECT_TRUE(out.truncated);
  EXPECT_TRUE(has(out.text, "1:35 Chapter 2 on budgets — \"naïve words again naïve"));
  EXPECT_TRUE(out.text.ends_with("…\""));
  EXPECT_TRUE(any_warning(out, "shortened the quote at 1:35"));
  EXPECT_FALSE(out.ok_to_paste);  // two chapters are too few
}

TEST(PostingFormats, TimestampStylesPerPlatform) {
  auto items = sample(3);
  items[2].start_seconds = 4530;  // 1:15:30
  auto r = request("audio_app_a", "standard", items);
  r.duration_seconds = 5000;
  EXPECT_EQ(render(r).text, "00:00 Chapter 1 on budgets\n01:35 Chapter 2 on budgets\n75:30 Chapter 3 on budgets");
  r.format = "audio_app_b";
  EXPECT_EQ(render(r).text,
            "00:00:00 Chapter 1 on budgets\n00:01:35 Chapter 2 on budgets\n01:15:30 Chapter 3 on budgets");
  r.format = "video_site";
  EXPECT_TRUE(render(r).text.ends_with("\n1:15:30 Chapter 3 on budgets"));
  r.format = "plain";
  EXPECT_TRUE(render(r).text.ends_with("\n1:15:30 Chapter 3 on budgets"));
}

TEST(PostingFormats, FormatTimestamp) {
  EXPECT_EQ(format_timestamp(0, TimestampStyle::kShortest), "0:00");
  EXPECT_EQ(format_timestamp(754, TimestampStyle::kShortest), "12:34");
  EXPECT_EQ(format_timestamp(3723, TimestampStyle::kShortest), "1:02:03");
  EXPECT_EQ(format_timestamp(5, TimestampStyle::kTwoDigitMinutes), "00:05");
  EXPECT_EQ(format_timestamp(3723, TimestampStyle::kTwoDigitMinutes), "1:02:03");
  EXPECT_EQ(format_timestamp(4530, TimestampStyle::kMinutesOnly), "75:30");
  EXPECT_EQ(format_timestamp(6000, TimestampStyle::kMinutesOnly), "100:00");
  EXPECT_EQ(format_timestamp(3723, TimestampStyle::kAlwaysHours), "01:02:03");
  EXPECT_EQ(format_timestamp(-5, TimestampStyle::kAlwaysHours), "00:00:00");
}

TEST(PostingFormats, MarkdownLinksUseTheItemUrl) {
  auto items = sample(3);
  items[1].url = "";
  items[2].start_seconds = 4530;
  items[2].url = "https://example.com/a (b)?t=4530";
  auto r = request("markdown", "standard", items);
  r.duration_seconds = 5000;
  EXPECT_EQ(render(r).text,
            "- [00:00](https://example.com/watch?v=abc&t=0) Chapter 1 on budgets\n"
            "- 01:35 Chapter 2 on budgets\n"
            "- [1:15:30](https://example.com/a%20%28b%29?t=4530) Chapter 3 on budgets");
}

}  // namespace
}  // namespace scribe::posting
