// Property test of render(): random item lists (seeded, so a failure
// reproduces) with multi-byte and wide titles, long quotes, links, unsorted
// and crowded times, through every format and variant. Whatever the input,
// the output must be valid UTF-8 within the platform's limits, and every word
// it shows must be a whole word of the input.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "common/text.h"
#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

const std::vector<std::string> kWords = {"budget", "Café", "über", "Straße", "naïve", "日本語", "résumé", "the", "plan",
                                         "#growth", "C#", "—", "2025", "😀", "a", "x", "long-ish", "phrase,", "end.",
                                         "Donaudampfschifffahrtsgesellschaft",
                                         // Dotted words that are not links, and links of every kind.
                                         "e.g.", "3.5", "Mr.", "Node.js", "evil.com/path", "ftp://x.y/z",
                                         "javascript:alert", "me@evil.co.uk", "www.x.org", "evil.co.uk"};

std::string random_text(std::mt19937& rng, int max_words) {
  std::uniform_int_distribution<int> count(0, max_words);
  std::uniform_int_distribution<std::size_t> pick(0, kWords.size() - 1);
  std::string s;
  for (int i = count(rng); i > 0; --i) s += (s.empty() ? "" : " ") + kWords[pick(rng)];
  return s;
}

// Words of the output that did not come from the input are the renderer's
// own: timestamps, numbering, quote marks, links and the ellipsis.
std::set<std::string> words_of(const std::string& text) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') ++i;
    if (i > start) out.insert(text.substr(start, i - start));
  }
  return out;
}

// A shown word with the renderer's decoration taken off.
std::string bare(std::string w) {
  for (std::string before; before != w;) {
    before = w;
    for (const std::string_view deco : {"\u2026", "\"", "(", ")", ":"}) {
      if (w.starts_with(deco)) w.erase(0, deco.size());
      if (w.ends_with(deco)) w.erase(w.size() - deco.size());
    }
  }
  return w;
}

TEST(PostingProperties, RandomInputsStayWithinTheRules) {
  std::mt19937 rng(20240611);
  const std::vector<std::string> variants = {"standard",        "highlights", "clips",
                                             "quoted_sections", "show_notes", "original"};
  for (int round = 0; round < 120; ++round) {
    RenderRequest r;
    r.duration_seconds = std::uniform_real_distribution<double>(-10, 8000)(rng);
    r.title = random_text(rng, 40);
    r.cta = rng() % 2 == 0;
    if (rng() % 3 == 0) r.cta_text = random_text(rng, 30);
    const int n = std::uniform_int_distribution<int>(0, 60)(rng);
    std::set<std::string> input_words = words_of(r.title + " " + r.cta_text + " " + std::string(kDefaultCta));
    for (int i = 0; i < n; ++i) {
      Item item;
      item.start_seconds = std::uniform_real_distribution<double>(-5, 8000)(rng);
      item.title = random_text(rng, rng() % 10 == 0 ? 60 : 8);
      if (rng() % 2 == 0) item.quote = random_text(rng, rng() % 5 == 0 ? 200 : 20);
      item.summary = random_text(rng, 20);
      if (rng() % 4 != 0) item.url = "https://example.com/v?t=" + std::to_string(i);
      for (const auto& w : words_of(item.title + " " + item.quote.value_or("") + " " + *item.summary))
        input_words.insert(w);
      r.items.push_back(std::move(item));
    }
    for (const auto& p : platforms()) {
      for (const auto& variant : variants) {
        r.format = std::string(p.format);
        r.variant = variant;
        const Rendered out = render(r);
        const std::string where = r.format + "/" + variant + " round " + std::to_string(round);
        ASSERT_TRUE(is_valid_utf8(out.text)) << where;
        EXPECT_EQ(out.char_count, static_cast<int>(utf8_length(out.text))) << where;
        EXPECT_EQ(out.items_total, n) << where;
        EXPECT_LE(out.items_used, n) << where;
        EXPECT_GE(out.items_used, 0) << where;
        EXPECT_TRUE(!out.truncated || out.items_used < n) << where;
        if (out.items_used < n && variant != "show_notes" && variant != "original") {
          EXPECT_FALSE(out.warnings.empty()) << where;
        }
        if (variant == "show_notes" || variant == "original") continue;
        if (p.layout == Layout::kPosts) {
          ASSERT_TRUE(out.thread) << where;
          EXPECT_LE(out.thread->size(), static_cast<std::size_t>(p.max_posts)) << where;
          for (const auto& post : *out.thread) {
            EXPECT_LE(weighted_length(post, p.weights), static_cast<std::size_t>(p.max_chars)) << where;
          }
        } else if (p.max_chars > 0) {
          EXPECT_LE(weighted_length(out.text, p.weights), static_cast<std::size_t>(p.max_chars)) << where;
        }
        EXPECT_EQ(out.ok_to_paste, out.items_used > 0 && out.items_used >= p.min_chapters) << where;
        if (p.first_must_be_zero && out.items_used > 0) {
          EXPECT_TRUE(out.text.starts_with(format_timestamp(0, p.timestamps) + " ")) << where;
        }
        EXPECT_TRUE(p.allows_urls || out.text.find("http") == std::string::npos) << where;
        // A format without links shows no word a platform would link.
        for (const auto& shown : words_of(out.text)) EXPECT_TRUE(p.allows_urls || !holds_link(shown)) << where;
        // No word is ever cut: each shown word is a word of the input (less
        // any '#' removed), or one the renderer makes itself.
        for (const auto& shown : words_of(out.text)) {
          std::string w = bare(shown);
          if (w.empty() || input_words.count(w) || input_words.count("#" + w) ||
              w.starts_with("https://example.com/") || w == "-" ||
              (w.starts_with("[") && w.find("](https://example.com/") != std::string::npos) || w == "\u2014" ||
              w.find_first_not_of("0123456789:/") == std::string::npos)
            continue;
          // A word that ended in separators loses them before an ellipsis.
          bool prefix_of_input = false;
          for (const auto& in : input_words)
            prefix_of_input = prefix_of_input || (in.starts_with(w) && in.size() > w.size() &&
                                                  in.find_first_not_of(",.-:\u2014", w.size()) == std::string::npos);
          EXPECT_TRUE(prefix_of_input) << where << ": '" << shown << "'";
        }
      }
    }
  }
}

}  // namespace
}  // namespace scribe::posting
