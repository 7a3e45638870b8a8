#include "domain/clip_captions.h"

#include <gtest/gtest.h>

#include <sstream>

namespace scribe::clips {
namespace {

// Words of `text` from `start` (seconds), one every 0.4 s, each 0.3 s long.
std::vector<ClipWord> speak(const std::string& text, double start) {
  std::vector<ClipWord> out;
  std::istringstream in(text);
  for (std::string w; in >> w; start += 0.4) out.push_back({w, start, start + 0.3});
  return out;
}

struct Dialogue {
  int layer = 0;
  std::string start, end, style, text;
};

// The Dialogue events of an ASS document, in order (Text is the last field and
// may itself hold commas).
std::vector<Dialogue> dialogues(const std::string& ass) {
  std::vector<Dialogue> out;
  std::istringstream in(ass);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Dialogue: ", 0) != 0) continue;
    std::vector<std::string> f;
    std::size_t pos = 10;
    for (int i = 0; i < 9; ++i) {
      const std::size_t comma = line.find(',', pos);
      f.push_back(line.substr(pos, comma - pos));
      pos = comma + 1;
    }
    out.push_back({std::stoi(f[0]), f[1], f[2], f[3], line.substr(pos)});
  }
  return out;
}

// The value list of the named style's "Style:" line.
std::vector<std::string> style_fields(const std::string& ass, const std::string& name) {
  std::istringstream in(ass);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Style: " + name + ",", 0) != 0) continue;
    std::vector<std::string> f;
    std::istringstream fields(line.substr(7));
    for (std::string v; std::getline(fields, v, ',');) f.push_back(v);
    return f;
  }
  return {};
}
// Indexes into style_fields, as in the Format line.
constexpr int kOutlineColour = 5, kBorderStyle = 15, kOutline = 16, kAlignment = 18, kMarginV = 21;

std::vector<std::string> texts(const std::vector<CaptionLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text());
  return out;
}

TEST(ClipCaptions, ParsesTheSpecSpellings) {
  EXPECT_EQ(parse_aspect("9:16"), Aspect::Portrait);
  EXPECT_EQ(parse_aspect("1:1"), Aspect::Square);
  EXPECT_EQ(parse_aspect("16:9"), Aspect::Landscape);
  EXPECT_EQ(parse_aspect("4:3"), std::nullopt);
  EXPECT_EQ(frame_size(Aspect::Portrait).width, 1080);
  EXPECT_EQ(frame_size(Aspect::Portrait).height, 1920);
  EXPECT_EQ(frame_size(Aspect::Square).height, 1080);
  EXPECT_EQ(frame_size(Aspect::Landscape).width, 1920);
  EXPECT_EQ(parse_style("karaoke"), Style::Karaoke);
  EXPECT_EQ(parse_style("highlight"), std::nullopt);
  EXPECT_EQ(parse_position("middle"), Position::Middle);
  EXPECT_EQ(parse_position("Lower"), std::nullopt);
  for (auto a : {Aspect::Portrait, Aspect::Square, Aspect::Landscape}) EXPECT_EQ(parse_aspect(aspect_name(a)), a);
  for (auto s : {Style::Captions, Style::Karaoke, Style::Minimal}) EXPECT_EQ(parse_style(style_name(s)), s);
  for (auto p : {Position::Upper, Position::Middle, Position::Lower}) EXPECT_EQ(parse_position(position_name(p)), p);
  EXPECT_EQ(parse_color("#ff8000"), (Rgb{0xFF, 0x80, 0x00}));
  EXPECT_EQ(parse_color("#00A0fF"), (Rgb{0x00, 0xA0, 0xFF}));
  for (const char* bad : {"ff8000", "#ff800", "#ff80001", "#gg8000", "", "#"})
    EXPECT_EQ(parse_color(bad), std::nullopt);
  EXPECT_EQ(ass_color({0x11, 0x22, 0x33}), "&H00332211");
  EXPECT_EQ(ass_color({0x11, 0x22, 0x33}, 0x80), "&H80332211");
  EXPECT_EQ(ass_time(3723456), "1:02:03.46");
  EXPECT_EQ(ass_time(4), "0:00:00.00");
}

TEST(ClipCaptions, BreaksLinesByCountSentenceAndPause) {
  const auto words = speak("one two three four five six seven", 10);
  EXPECT_EQ(texts(caption_lines(words, 10, 20, 3)),
            (std::vector<std::string>{"one two three", "four five six", "seven"}));
  EXPECT_EQ(texts(caption_lines(words, 10, 20, 6)), (std::vector<std::string>{"one two three four five six", "seven"}));
  // Out-of-range counts are clamped to 1-6.
  EXPECT_EQ(caption_lines(words, 10, 20, 0).size(), 7u);
  EXPECT_EQ(caption_lines(words, 10, 20, 9).size(), 2u);

  EXPECT_EQ(texts(caption_lines(speak("It rained. We stayed (inside.) Then \"why?\" we asked", 0), 0, 20, 4)),
            (std::vector<std::string>{"It rained.", "We stayed (inside.)", "Then \"why?\"", "we asked"}));

  auto paused = speak("a b c d", 0);
  for (std::size_t i = 2; i < paused.size(); ++i)
    paused[i].start += 1.5, paused[i].end += 1.5;  // c starts 1.6 s after b
  EXPECT_EQ(texts(caption_lines(paused, 0, 20, 6)), (std::vector<std::string>{"a b", "c d"}));
}

TEST(ClipCaptions, TimesAreRelativeToTheClipAndLinesBridgeShortGaps) {
  // one 10.0-10.3, two 10.4, three 10.8, four 11.2, five 11.6-11.9.
  const auto lines = caption_lines(speak("one two three four five", 10), 10, 20, 3);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].start_ms, 0);
  EXPECT_EQ(lines[0].end_ms, 1200);  // up to the next line's start
  EXPECT_EQ(lines[0].words[1].start_ms, 400);
  EXPECT_EQ(lines[0].words[1].end_ms, 700);
  EXPECT_EQ(lines[1].start_ms, 1200);
  EXPECT_EQ(lines[1].end_ms, 1900 + kHoldMs);  // the last line holds

  // A gap over kBridgeGapMs: the line holds kHoldMs, then nothing shows.
  auto gap = speak("a b", 0);
  auto later = speak("c d", 3);
  gap.insert(gap.end(), later.begin(), later.end());
  const auto gapped = caption_lines(gap, 0, 20, 2);
  ASSERT_EQ(gapped.size(), 2u);
  EXPECT_EQ(gapped[0].end_ms, 700 + kHoldMs);
  EXPECT_EQ(gapped[1].start_ms, 3000);

  // The hold never runs past the clip's end.
  const auto tail = caption_lines(speak("x y", 0), 0, 0.8, 3);
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].end_ms, 800);
}

TEST(ClipCaptions, KeepsWordsWhoseMidpointIsInRangeAndClampsThem) {
  const std::vector<ClipWord> words = {{"before", 4.0, 4.9},   {"straddles", 4.8, 5.4}, {"inside", 5.5, 5.9},
                                       {"  ", 6.0, 6.1},       {"late", 6.8, 7.4},      {"after", 7.1, 7.5},
                                       {"unsorted", 5.45, 5.5}};
  const auto lines = caption_lines(words, 5.0, 7.2, 6);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text(), "straddles unsorted inside late");
  EXPECT_EQ(lines[0].words[0].start_ms, 0);   // 4.8 clamped to the clip's start
  EXPECT_EQ(lines[0].words[3].end_ms, 2200);  // 7.4 clamped to the clip's end
  EXPECT_EQ(lines[0].end_ms, 2200);
  EXPECT_TRUE(caption_lines(words, 20, 30, 3).empty());
}

TEST(ClipCaptions, EscapesAssSpecialCharacters) {
  EXPECT_EQ(escape_ass_text("a{\\b}c"),
            "a\\{\\\xE2\x81\xA0"
            "b\\}c");
  EXPECT_EQ(escape_ass_text("C:\\new\\N"), "C:\\\xE2\x81\xA0new\\\xE2\x81\xA0N");
  EXPECT_EQ(escape_ass_text("two\r\nlines\n"), "two  lines ");
  EXPECT_EQ(escape_ass_text("plain, text: ok"), "plain, text: ok");

  CaptionOptions o;
  o.title = "Q&A {live}\nnow";
  const auto events = dialogues(render_ass({{"{\\b1}bold", 0.1, 0.5}}, 0, 2, o));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].text, "Q&A \\{live\\} now");
  EXPECT_EQ(events[1].text,
            "\\{\\\xE2\x81\xA0"
            "b1\\}bold");
}

TEST(ClipCaptions, DocumentHasTheFrameSizeAndOneEventPerLine) {
  CaptionOptions o;
  o.frame = frame_size(Aspect::Landscape);
  const std::string ass = render_ass(speak("one two three four five", 100), 100, 103, o);
  EXPECT_NE(ass.find("[Script Info]\n"), std::string::npos);
  EXPECT_NE(ass.find("\nPlayResX: 1920\nPlayResY: 1080\n"), std::string::npos);
  EXPECT_NE(ass.find("\n[V4+ Styles]\n"), std::string::npos);
  EXPECT_NE(ass.find("\n[Events]\n"), std::string::npos);
  const auto events = dialogues(ass);
  ASSERT_EQ(events.size(), 2u);  // no title
  EXPECT_EQ(events[0].start, "0:00:00.00");
  EXPECT_EQ(events[0].end, "0:00:01.20");
  EXPECT_EQ(events[0].text, "one two three");
  EXPECT_EQ(events[1].start, "0:00:01.20");
  EXPECT_EQ(events[1].end, "0:00:02.50");
  EXPECT_EQ(events[1].style, "Caption");
}

TEST(ClipCaptions, StylesBoxOrOutline) {
  const auto words = speak("one two", 0);
  CaptionOptions o;
  o.style = Style::Captions;
  auto f = style_fields(render_ass(words, 0, 2, o), "Caption");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[kBorderStyle], "3");                    // opaque box
  EXPECT_EQ(f[kOutlineColour].substr(0, 4), "&H60");  // translucent black
  EXPECT_EQ(f[kOutline], std::to_string(caption_layout(o).box_padding));
  o.style = Style::Minimal;
  f = style_fields(render_ass(words, 0, 2, o), "Caption");
  EXPECT_EQ(f[kBorderStyle], "1");
  EXPECT_EQ(f[kOutlineColour], "&H00000000");
  // Neither draws a highlight layer.
  for (const auto& e : dialogues(render_ass(words, 0, 2, o))) EXPECT_EQ(e.layer, 0);
}

TEST(ClipCaptions, KaraokeHighlightsEachWordWhileItIsSpoken) {
  CaptionOptions o;
  o.style = Style::Karaoke;
  o.highlight = *parse_color("#FFD400");
  const auto events = dialogues(render_ass(speak("one two three four", 0), 0, 5, o));
  std::vector<Dialogue> base, highlight;
  for (const auto& e : events) (e.layer == 0 ? base : highlight).push_back(e);
  ASSERT_EQ(base.size(), 2u);
  ASSERT_EQ(highlight.size(), 4u);
  // The word intervals tile their line: one - two - three | four.
  EXPECT_EQ(highlight[0].start, "0:00:00.00");
  EXPECT_EQ(highlight[0].end, "0:00:00.40");
  EXPECT_EQ(highlight[1].start, "0:00:00.40");
  EXPECT_EQ(highlight[2].end, base[0].end);
  EXPECT_EQ(highlight[3].start, base[1].start);
  EXPECT_EQ(highlight[3].end, base[1].end);
  // Everything transparent but the spoken word, boxed in the highlight colour
  // (BGR) with black text on this light colour.
  EXPECT_EQ(highlight[1].text,
            "{\\alpha&HFF&}one {\\1c&H000000&\\3c&H00D4FF&\\1a&H00&\\3a&H00&}two{\\alpha&HFF&} three");
  EXPECT_EQ(highlight[3].text, "{\\alpha&HFF&}{\\1c&H000000&\\3c&H00D4FF&\\1a&H00&\\3a&H00&}four{\\alpha&HFF&}");
  // White text on a dark highlight.
  o.highlight = {0x20, 0x30, 0xA0};
  const auto dark = dialogues(render_ass(speak("one", 0), 0, 2, o));
  ASSERT_EQ(dark.size(), 2u);
  EXPECT_NE(dark[1].text.find("\\1c&HFFFFFF&\\3c&HA03020&"), std::string::npos);
}

TEST(ClipCaptions, PositionsSetAlignmentAndMargins) {
  const auto words = speak("one", 0);
  CaptionOptions o;  // 9:16
  auto layout = [&](Position p) {
    o.position = p;
    return style_fields(render_ass(words, 0, 2, o), "Caption");
  };
  auto lower = layout(Position::Lower);
  EXPECT_EQ(lower[kAlignment], "2");
  EXPECT_EQ(lower[kMarginV], std::to_string(static_cast<int>(1920 * 0.18 + 0.5)));
  auto middle = layout(Position::Middle);
  EXPECT_EQ(middle[kAlignment], "5");
  auto upper = layout(Position::Upper);
  EXPECT_EQ(upper[kAlignment], "8");
  const int upper_margin = std::stoi(upper[kMarginV]);

  // With a title, upper captions move below it: the longer the title, the lower.
  o.title = "A short title";
  const CaptionLayout one_line = caption_layout(o);
  EXPECT_GT(one_line.margin_v, one_line.title_margin_v + one_line.title_font_size);
  EXPECT_GE(one_line.margin_v, upper_margin);
  o.title = std::string(110, 'w');
  EXPECT_GT(caption_layout(o).margin_v, one_line.margin_v + 2 * one_line.title_font_size);
  // The title's own style: top centre.
  EXPECT_EQ(style_fields(render_ass(words, 0, 2, o), "Title")[kAlignment], "8");

  o.frame = frame_size(Aspect::Landscape);
  o.position = Position::Lower;
  o.title.clear();
  EXPECT_EQ(caption_layout(o).margin_v, static_cast<int>(1080 * 0.09 + 0.5));
}

TEST(ClipCaptions, TitleSpansTheClipOnItsOwnLayer) {
  CaptionOptions o;
  o.title = "  " + std::string(130, 'x') + "  ";
  const auto events = dialogues(render_ass(speak("one", 1), 1, 3.5, o));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].layer, 2);
  EXPECT_EQ(events[0].style, "Title");
  EXPECT_EQ(events[0].start, "0:00:00.00");
  EXPECT_EQ(events[0].end, "0:00:02.50");
  EXPECT_EQ(events[0].text, std::string(kMaxTitleChars, 'x'));  // trimmed, cut to 120
  o.title = " \n ";
  EXPECT_EQ(dialogues(render_ass(speak("one", 1), 1, 3.5, o)).size(), 1u);
}

TEST(ClipCaptions, SrtHasTheSameLines) {
  const auto words = speak("one two three four {five}", 61);
  EXPECT_EQ(render_srt(words, 61, 70, 3),
            "1\n00:00:00,000 --> 00:00:01,200\none two three\n\n"
            "2\n00:00:01,200 --> 00:00:02,500\nfour {five}\n");
  EXPECT_EQ(render_srt(words, 0, 10, 3), "");
}

}  // namespace
}  // namespace scribe::clips
