#include "media/clip_render.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "tests/media_scratch.h"

// Real renders of short clips (2.5 s) with FFmpeg, checked with ffprobe and by
// reading pixels of frames taken at known word times.
namespace scribe::media {
namespace {

namespace fs = std::filesystem;
using clips::Aspect;
using clips::Position;
using clips::Rgb;
using clips::Style;

constexpr double kStart = 0.5, kEnd = 3.0;
// Synthetic word times over the real speech: the checks need known times, not
// a recognizer. Lines of three: "alpha bravo charlie" from 0.0 s of the clip to
// 1.5 s, "delta echo" from 1.5 s.
const std::vector<clips::ClipWord> kWords = {
    {"alpha", 0.5, 0.9}, {"bravo", 1.0, 1.4}, {"charlie", 1.5, 1.9}, {"delta", 2.0, 2.4}, {"echo", 2.5, 2.9}};
constexpr Rgb kBackground{0x14, 0x1B, 0x2D};
constexpr Rgb kHighlight{0x00, 0xC8, 0x53};

struct Frame {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  Rgb at(int x, int y) const {
    const std::size_t i = (std::size_t(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

double distance(Rgb a, Rgb b) {
  return std::sqrt(std::pow(a.r - b.r, 2) + std::pow(a.g - b.g, 2) + std::pow(a.b - b.b, 2));
}
bool is_white(Rgb c) { return c.r > 200 && c.g > 200 && c.b > 200; }

struct Region {
  int x0, y0, x1, y1;
};

// Pixels of `r` for which `pred` holds, and the mean x of those.
template <typename Pred>
std::pair<int, double> count(const Frame& f, Region r, Pred pred) {
  int n = 0;
  double sum_x = 0;
  for (int y = std::max(0, r.y0); y < std::min(f.height, r.y1); ++y)
    for (int x = std::max(0, r.x0); x < std::min(f.width, r.x1); ++x)
      if (pred(f.at(x, y))) ++n, sum_x += x;
  return {n, n ? sum_x / n : 0};
}

class ClipRenderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<testing::MediaScratch>("scribe_clip_render_test");
    sh("flite -voice slt -t 'Thieves who rob friends deserve jail. The salt breeze came across from the sea.' -o "
       "speech.wav");
    // A 640x360 test pattern with the speech as its soundtrack.
    sh("ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc=size=640x360:rate=30 -i speech.wav -shortest "
       "-c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac source.mp4");
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static std::string path(const std::string& name) { return scratch_->path(name); }
  static void sh(const std::string& command) { ASSERT_TRUE(scratch_->sh(command)) << command; }

  static std::string capture(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (!p) return out;
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
    return out;
  }

  static Json probe(const std::string& file) {
    return Json::parse(capture("ffprobe -v error -show_entries "
                               "format=duration:stream=codec_type,codec_name,width,height,duration -of json '" +
                               file + "'"),
                       nullptr, false);
  }

  static Frame frame_at(const std::string& file, double t, int width, int height) {
    Frame f{width, height, {}};
    const std::string raw = capture("ffmpeg -nostdin -loglevel error -ss " + std::to_string(t) + " -i '" + file +
                                    "' -frames:v 1 -f rawvideo -pix_fmt rgb24 -");
    f.rgb.assign(raw.begin(), raw.end());
    return f;
  }

  static RenderRequest request(ClipOutput output, Aspect aspect, Style style, const std::string& name) {
    RenderRequest q;
    q.audio_path = path("speech.wav");
    q.clip_start = kStart;
    q.clip_end = kEnd;
    q.output = output;
    q.aspect = aspect;
    q.background = kBackground;
    q.work_dir = path("work");
    q.output_path = path(name);
    if (output != ClipOutput::Audio) {
      clips::CaptionOptions o;
      o.frame = clips::frame_size(aspect);
      o.style = style;
      o.highlight = kHighlight;
      o.title = "Clip test";
      q.ass_text = clips::render_ass(kWords, kStart, kEnd, o);
    }
    return q;
  }

  // The checks every MP4 must pass: H.264 of the aspect's size and AAC, both
  // lasting the range.
  static void expect_mp4(const RenderResult& r, Aspect aspect) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.content_type, "video/mp4");
    EXPECT_NEAR(r.duration_seconds, kEnd - kStart, kDurationTolerance);
    EXPECT_GT(r.peak_rss_mib, 1);
    const Json j = probe(r.output_path);
    ASSERT_TRUE(j.is_object());
    EXPECT_NEAR(std::stod(j["format"]["duration"].get<std::string>()), kEnd - kStart, kDurationTolerance);
    bool video = false, audio = false;
    for (const auto& s : j["streams"]) {
      EXPECT_NEAR(std::stod(s["duration"].get<std::string>()), kEnd - kStart, kDurationTolerance);
      if (s["codec_type"] == "video") {
        video = true;
        EXPECT_EQ(s["codec_name"], "h264");
        EXPECT_EQ(s["width"], clips::frame_size(aspect).width);
        EXPECT_EQ(s["height"], clips::frame_size(aspect).height);
      } else if (s["codec_type"] == "audio") {
        audio = true;
        EXPECT_EQ(s["codec_name"], "aac");
      }
    }
    EXPECT_TRUE(video);
    EXPECT_TRUE(audio);
    // No partial file or written captions are left behind.
    for (const auto& e : fs::directory_iterator(path("work"))) ADD_FAILURE() << "left behind: " << e.path();
  }

  // Where the caption line sits (lower position): the band above the bottom
  // margin, one line high, across the middle of the frame.
  static Region caption_band(Aspect aspect, Style style) {
    clips::CaptionOptions o;
    o.frame = clips::frame_size(aspect);
    o.style = style;
    const auto l = clips::caption_layout(o);
    const int bottom = o.frame.height - l.margin_v;
    return {o.frame.width / 2 - 300, bottom - l.font_size, o.frame.width / 2 + 300, bottom};
  }

  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(ClipRenderTest, AudiogramPortraitKaraokeHighlightsTheSpokenWord) {
  const RenderResult r = render_clip(request(ClipOutput::Audiogram, Aspect::Portrait, Style::Karaoke, "k.mp4"));
  expect_mp4(r, Aspect::Portrait);
  const Region band = caption_band(Aspect::Portrait, Style::Karaoke);
  auto highlight = [](Rgb c) { return distance(c, kHighlight) < 60; };
  // "bravo" (0.5-0.9 s of the clip), then "charlie" (1.0-1.4 s), of one line.
  const Frame bravo = frame_at(r.output_path, 0.7, 1080, 1920);
  const Frame charlie = frame_at(r.output_path, 1.2, 1080, 1920);
  ASSERT_EQ(bravo.rgb.size(), 1080u * 1920 * 3);
  const auto [bravo_n, bravo_x] = count(bravo, band, highlight);
  const auto [charlie_n, charlie_x] = count(charlie, band, highlight);
  EXPECT_GT(bravo_n, 2000);
  EXPECT_GT(charlie_n, 2000);
  EXPECT_GT(charlie_x, bravo_x + 100) << "the highlight moves right with the words";
  EXPECT_GT(count(bravo, band, is_white).first, 1000) << "the other words, in white";
  // Nothing of the highlight colour outside the caption line.
  EXPECT_LT(count(bravo, {0, 0, 1080, band.y0 - 40}, highlight).first, 50);
  // The title at the top.
  EXPECT_GT(count(bravo, {0, 100, 1080, 200}, is_white).first, 500);
}

TEST_F(ClipRenderTest, AudiogramSquareCaptionsSitOnATranslucentBox) {
  RenderRequest q = request(ClipOutput::Audiogram, Aspect::Square, Style::Captions, "c.mp4");
  q.visual = AudiogramVisual::Spectrum;
  const RenderResult r = render_clip(q);
  expect_mp4(r, Aspect::Square);
  const Frame f = frame_at(r.output_path, 0.7, 1080, 1080);
  const Region band = caption_band(Aspect::Square, Style::Captions);
  const int pixels = (band.x1 - band.x0) * (band.y1 - band.y0);
  // Inside the box: white text and the darkened box, hardly any plain background.
  EXPECT_GT(count(f, band, is_white).first, 1000);
  EXPECT_LT(count(f, band, [](Rgb c) { return distance(c, kBackground) < 6; }).first, pixels / 10);
  // Away from captions, title and visual, the background as given.
  EXPECT_LT(distance(f.at(40, 500), kBackground), 12);
}

TEST_F(ClipRenderTest, AudiogramLandscapeMinimalHasNoBox) {
  const RenderResult r = render_clip(request(ClipOutput::Audiogram, Aspect::Landscape, Style::Minimal, "m.mp4"));
  expect_mp4(r, Aspect::Landscape);
  const Frame f = frame_at(r.output_path, 0.7, 1920, 1080);
  const Region band = caption_band(Aspect::Landscape, Style::Minimal);
  const int pixels = (band.x1 - band.x0) * (band.y1 - band.y0);
  EXPECT_GT(count(f, band, is_white).first, 1000);
  // Between the letters the background shows: no box.
  EXPECT_GT(count(f, band, [](Rgb c) { return distance(c, kBackground) < 12; }).first, pixels / 3);
}

TEST_F(ClipRenderTest, AudioIsAnM4aOfTheRange) {
  const RenderResult r = render_clip(request(ClipOutput::Audio, Aspect::Portrait, Style::Captions, "a.m4a"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content_type, "audio/mp4");
  EXPECT_NEAR(r.duration_seconds, kEnd - kStart, kDurationTolerance);
  const Json j = probe(r.output_path);
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["codec_name"], "aac");
}

TEST_F(ClipRenderTest, VideoBlurFillsAroundTheScaledSource) {
  RenderRequest q = request(ClipOutput::Video, Aspect::Portrait, Style::Captions, "vb.mp4");
  q.video_path = path("source.mp4");
  q.audio_path.clear();  // the video's own soundtrack
  const RenderResult r = render_clip(q);
  expect_mp4(r, Aspect::Portrait);
  const Frame f = frame_at(r.output_path, 0.7, 1080, 1920);
  // The source scaled to 1080x608 in the middle; above it the blurred fill,
  // coloured (testsrc has no black) and smooth from pixel to pixel.
  auto coloured = [](Rgb c) { return c.r + c.g + c.b > 120; };
  EXPECT_GT(count(f, {0, 100, 1080, 600}, coloured).first, 1080 * 500 * 9 / 10);
  double step = 0;
  for (int x = 0; x + 1 < 1080; ++x) step += distance(f.at(x, 400), f.at(x + 1, 400));
  EXPECT_LT(step / 1079, 4) << "the fill is blurred";
  EXPECT_GT(count(f, caption_band(Aspect::Portrait, Style::Captions), is_white).first, 1000);
}

TEST_F(ClipRenderTest, VideoCropFillsTheFrameWithSharpSource) {
  RenderRequest q = request(ClipOutput::Video, Aspect::Square, Style::Minimal, "vc.mp4");
  q.video_path = path("source.mp4");
  q.framing = Framing::Crop;
  const RenderResult r = render_clip(q);
  expect_mp4(r, Aspect::Square);
  const Frame f = frame_at(r.output_path, 0.7, 1080, 1080);
  // testsrc's colour bars run to the top edge, with hard edges between them.
  double largest = 0;
  for (int x = 0; x + 1 < 1080; ++x) largest = std::max(largest, distance(f.at(x, 20), f.at(x + 1, 20)));
  EXPECT_GT(largest, 80);
}

TEST_F(ClipRenderTest, EscapesAWorkDirectoryWithSpecialCharacters) {
  RenderRequest q = request(ClipOutput::Audiogram, Aspect::Landscape, Style::Captions, "");
  q.clip_end = kStart + 1;
  q.work_dir = path("it's, [odd]: dir;");
  q.output_path.clear();
  const RenderResult r = render_clip(q);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.output_path, q.work_dir + "/clip.mp4");
  EXPECT_NEAR(r.duration_seconds, 1, kDurationTolerance);
}

TEST_F(ClipRenderTest, FailuresAreReportedNotThrown) {
  RenderRequest q = request(ClipOutput::Audio, Aspect::Portrait, Style::Captions, "fail.m4a");
  q.audio_path = path("missing.wav");
  RenderResult r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no audio file"), std::string::npos) << r.error;

  std::ofstream(path("notes.wav")) << "These are meeting notes, not audio.\n";
  q.audio_path = path("notes.wav");
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("ffmpeg exited with status"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("notes.wav"), std::string::npos) << "FFmpeg's own words: " << r.error;

  // The speech lasts about 5 s: a range past its end gives a short output.
  q.audio_path = path("speech.wav");
  q.clip_start = 4;
  q.clip_end = 9;
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("does not last"), std::string::npos) << r.error;

  q = request(ClipOutput::Video, Aspect::Portrait, Style::Captions, "fail.mp4");
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("source video"), std::string::npos) << r.error;

  q = request(ClipOutput::Audio, Aspect::Portrait, Style::Captions, "fail.m4a");
  q.ffmpeg = "/nonexistent/ffmpeg";
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot run /nonexistent/ffmpeg"), std::string::npos) << r.error;

  q = request(ClipOutput::Audiogram, Aspect::Portrait, Style::Karaoke, "fail.mp4");
  q.timeout = std::chrono::seconds(0);
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("timed out"), std::string::npos) << r.error;

  // An address space too small for FFmpeg: a failed render, not a host in trouble.
  q = request(ClipOutput::Audiogram, Aspect::Portrait, Style::Karaoke, "fail.mp4");
  q.memory_limit_mib = 40;
  r = render_clip(q);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("ffmpeg"), std::string::npos) << r.error;

  for (const char* name : {"fail.m4a", "fail.mp4"}) EXPECT_FALSE(fs::exists(path(name))) << name;
  for (const auto& e : fs::directory_iterator(path("work"))) ADD_FAILURE() << "left behind: " << e.path();
}

TEST(ClipRenderArguments, EscapesFilterValuesTwice) {
  EXPECT_EQ(escape_filter_value("/tmp/a.ass"), "/tmp/a.ass");
  // ' and : escaped for the filter's options, then every \ ' [ ] , ; for the graph.
  EXPECT_EQ(escape_filter_value("it's:a,[b];c"), "it\\\\\\'s\\\\:a\\,\\[b\\]\\;c");
  EXPECT_EQ(parse_clip_output("audiogram"), ClipOutput::Audiogram);
  EXPECT_EQ(parse_clip_output("video"), ClipOutput::Video);
  EXPECT_EQ(parse_clip_output("audio"), ClipOutput::Audio);
  EXPECT_EQ(parse_clip_output("gif"), std::nullopt);
  EXPECT_EQ(parse_framing("crop"), Framing::Crop);
  EXPECT_EQ(parse_framing("fit"), std::nullopt);
}

TEST(ClipRenderArguments, EncodeAsTheSpecAsks) {
  RenderRequest q;
  q.audio_path = "/in/a.mp3";
  q.clip_start = 12.5;
  q.clip_end = 42.5;
  q.title = "T";
  const auto args = ffmpeg_arguments(q, "/w/c.ass", "/w/out.mp4");
  std::string line;
  for (const auto& a : args) line += a + " ";
  for (const char* part : {"-ss 12.500 -t 30.000 -i file:/in/a.mp3 ", "-c:v libx264 -preset veryfast -crf 23 ",
                           "-pix_fmt yuv420p -r 30 ", "-x264-params bframes=0:me=dia:subme=1 ", "-c:a aac ",
                           "-metadata title=T ", "-movflags +faststart ", "color=c=0x141B2D:s=1080x1920:", "showwaves=",
                           "ass=filename=/w/c.ass,format=yuv420p[v]", "-f mp4 file:/w/out.mp4 "}) {
    EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
  }
  q.output = ClipOutput::Audio;
  line.clear();
  for (const auto& a : ffmpeg_arguments(q, "", "/w/out.m4a")) line += a + " ";
  EXPECT_EQ(line.find("-filter_complex"), std::string::npos) << line;
  EXPECT_NE(line.find("-map 0:a:0 -vn "), std::string::npos) << line;
}

}  // namespace
}  // namespace scribe::media
