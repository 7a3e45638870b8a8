#include "media/source_media.h"

#include <gtest/gtest.h>

#include <thread>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/json.h"
#include "media/process.h"
#include "tests/media_scratch.h"

// has_video_stream and extract_audio on files made with flite and FFmpeg, and
// run_process (media/process.h), which both run their tools with.
namespace scribe::media {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class SourceMediaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<testing::MediaScratch>("scribe_source_media_test");
    sh("flite -voice slt -t 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.' "
       "-o speech.wav");
    sh("ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc=size=320x240:rate=25 -i speech.wav -shortest "
       "-c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac video.mp4");
    // An MP3 with cover art: a PNG stored as a video stream marked attached_pic.
    sh("ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc=size=64x64:rate=1 -frames:v 1 cover.png");
    sh("ffmpeg -nostdin -y -loglevel error -i speech.wav -i cover.png -map 0 -map 1 -c:a libmp3lame -c:v png "
       "-disposition:v attached_pic -id3v2_version 3 cover.mp3");
    sh("ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc=size=320x240:rate=25:duration=2 "
       "-c:v libx264 -preset ultrafast -pix_fmt yuv420p silent.mp4");
    // Blu-ray PCM in MPEG-TS: Matroska has no codec id for it, so it cannot be copied.
    sh("ffmpeg -nostdin -y -loglevel error -i speech.wav -ar 48000 -ac 2 -c:a pcm_bluray -f mpegts bluray.m2ts");
    // What browsers do not play: an AVI (MPEG-4 Part 2 and MP3) and a WAV in
    // an AVI-era codec (Microsoft ADPCM).
    sh("ffmpeg -nostdin -y -loglevel error -f lavfi -i testsrc=size=322x240:rate=25 -i speech.wav -shortest "
       "-c:v mpeg4 -c:a libmp3lame old.avi");
    sh("ffmpeg -nostdin -y -loglevel error -i speech.wav -c:a adpcm_ms adpcm.wav");
    std::ofstream(path("notes.wav")) << "These are meeting notes, not audio.\n";
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static std::string path(const std::string& name) { return scratch_->path(name); }
  static void sh(const std::string& command) { ASSERT_TRUE(scratch_->sh(command)) << command; }

  static Json probe(const std::string& file) {
    const ProcessResult r =
        run_process({"ffprobe", "-v", "error", "-show_entries",
                     "format=format_name,duration:stream=codec_type,codec_name", "-of", "json", "file:" + file},
                    30s);
    EXPECT_TRUE(r.ok()) << r.err;
    return Json::parse(r.out, nullptr, false);
  }
  static double duration(const Json& j) { return std::stod(j["format"]["duration"].get<std::string>()); }

  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(SourceMediaTest, TellsVideoFromAudioAndCoverArt) {
  EXPECT_TRUE(has_video_stream(path("video.mp4")));
  EXPECT_FALSE(has_video_stream(path("speech.wav")));
  // The MP3 does carry a video stream, which is cover art: not a video.
  const Json j = probe(path("cover.mp3"));
  ASSERT_EQ(j["streams"].size(), 2u);
  EXPECT_FALSE(has_video_stream(path("cover.mp3")));
}

TEST_F(SourceMediaTest, ProbesContainerCodecsAndDuration) {
  playback::Probe p = probe_streams(path("old.avi"));
  EXPECT_EQ(p.format_name, "avi");
  ASSERT_EQ(p.streams.size(), 2u);
  EXPECT_EQ(p.streams[0].type, "video");
  EXPECT_EQ(p.streams[0].codec, "mpeg4");
  EXPECT_EQ(p.streams[1].codec, "mp3");
  ASSERT_TRUE(p.duration_seconds.has_value());
  EXPECT_NEAR(*p.duration_seconds, duration(probe(path("speech.wav"))), 0.2);
  EXPECT_FALSE(playback::decide(p).playable);
  p = probe_streams(path("cover.mp3"));
  ASSERT_EQ(p.streams.size(), 2u);
  EXPECT_TRUE(p.streams[1].attached_pic);
  EXPECT_TRUE(playback::decide(p).playable);
  EXPECT_TRUE(playback::decide(probe_streams(path("video.mp4"))).playable);
}

TEST_F(SourceMediaTest, RenditionsArePlayable) {
  make_rendition(path("old.avi"), path("old.mp4"), playback::Kind::Video);
  playback::Probe p = probe_streams(path("old.mp4"));
  playback::Decision d = playback::decide(p);
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.kind, playback::Kind::Video);
  EXPECT_EQ(d.content_type, "video/mp4");
  ASSERT_EQ(p.streams.size(), 2u);
  EXPECT_EQ(p.streams[0].codec, "h264");
  EXPECT_EQ(p.streams[1].codec, "aac");
  EXPECT_NEAR(*p.duration_seconds, *probe_streams(path("old.avi")).duration_seconds, 0.2);
  EXPECT_FALSE(fs::exists(path("old.mp4.part")));

  make_rendition(path("adpcm.wav"), path("adpcm.m4a"), playback::Kind::Audio);
  p = probe_streams(path("adpcm.m4a"));
  d = playback::decide(p);
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.content_type, "audio/mp4");
  ASSERT_EQ(p.streams.size(), 1u);
  EXPECT_EQ(p.streams[0].codec, "aac");

  try {
    make_rendition(path("notes.wav"), path("notes.m4a"), playback::Kind::Audio);
    ADD_FAILURE() << "no throw for a file that is not media";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "internal_error");
  }
  EXPECT_FALSE(fs::exists(path("notes.m4a")));
  EXPECT_FALSE(fs::exists(path("notes.m4a.part")));
}

TEST_F(SourceMediaTest, HasVideoStreamThrowsWhenItCannotTell) {
  try {
    has_video_stream(path("notes.wav"));
    ADD_FAILURE() << "no throw for a file that is not media";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "internal_error");
    EXPECT_NE(e.message().find("notes.wav"), std::string::npos) << e.message();
  }
  try {
    has_video_stream(path("video.mp4"), "/nonexistent/ffprobe");
    ADD_FAILURE() << "no throw without ffprobe";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "internal_error");
    EXPECT_NE(e.message().find("cannot run /nonexistent/ffprobe"), std::string::npos) << e.message();
  }
}

TEST_F(SourceMediaTest, ExtractsTheAudioOfAVideoWithoutReencoding) {
  const std::string out = path("video.mka");
  extract_audio(path("video.mp4"), out);
  const Json j = probe(out);
  ASSERT_TRUE(j.is_object());
  EXPECT_NE(j["format"]["format_name"].get<std::string>().find("matroska"), std::string::npos);
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["codec_type"], "audio");
  EXPECT_EQ(j["streams"][0]["codec_name"], "aac");  // the source's, copied
  EXPECT_NEAR(duration(j), duration(probe(path("video.mp4"))), 0.1);
  EXPECT_FALSE(fs::exists(out + ".part"));
  EXPECT_FALSE(has_video_stream(out));
}

TEST_F(SourceMediaTest, ExtractsPcmAndDropsCoverArt) {
  extract_audio(path("speech.wav"), path("speech.mka"));
  Json j = probe(path("speech.mka"));
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["codec_name"], "pcm_s16le");
  EXPECT_NEAR(duration(j), duration(probe(path("speech.wav"))), 0.1);

  extract_audio(path("cover.mp3"), path("cover.mka"));
  j = probe(path("cover.mka"));
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["codec_name"], "mp3");
}

TEST_F(SourceMediaTest, ReencodesToAacWhatMatroskaCannotCarry) {
  extract_audio(path("bluray.m2ts"), path("bluray.mka"));
  const Json j = probe(path("bluray.mka"));
  ASSERT_EQ(j["streams"].size(), 1u);
  EXPECT_EQ(j["streams"][0]["codec_name"], "aac");
  EXPECT_NEAR(duration(j), duration(probe(path("speech.wav"))), 0.1);
  EXPECT_FALSE(fs::exists(path("bluray.mka.part")));
}

TEST_F(SourceMediaTest, ExtractAudioThrowsAndLeavesNothing) {
  auto expect_failure = [](const std::string& in, const std::string& out, const std::string& ffmpeg,
                           const std::string& words) {
    try {
      extract_audio(in, out, ffmpeg);
      ADD_FAILURE() << "no throw for " << in;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), "internal_error");
      EXPECT_NE(e.message().find(words), std::string::npos) << e.message();
    }
    EXPECT_FALSE(fs::exists(out)) << out;
    EXPECT_FALSE(fs::exists(out + ".part")) << out;
  };
  // FFmpeg's own words about the file, from its stderr.
  expect_failure(path("notes.wav"), path("notes.mka"), "ffmpeg", "notes.wav: Invalid data");
  expect_failure(path("silent.mp4"), path("silent.mka"), "ffmpeg", "matches no streams");
  expect_failure(path("missing.mp4"), path("missing.mka"), "ffmpeg", "No such file");
  expect_failure(path("video.mp4"), path("x.mka"), "/nonexistent/ffmpeg", "cannot run /nonexistent/ffmpeg");
}

TEST(ProcessTest, CapturesOutputAndCost) {
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(describe_failure("sh", r, 10s), "sh exited with status 3: err");
  EXPECT_GT(r.peak_rss_mib, 0);

  // CPU time from wait4: a second of busy shell arithmetic is counted.
  const ProcessResult busy = run_process({"sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"}, 60s);
  EXPECT_TRUE(busy.ok());
  EXPECT_GT(busy.cpu_seconds, 0.05);
}

TEST(ProcessTest, KillsTheWholeGroupAtTheDeadline) {
  // The shell's child keeps the pipes open: only killing the group ends the wait.
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({"sh", "-c", "sleep 30 & wait"}, 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(describe_failure("sh", r, 300ms), "sh timed out after 0.3 s");
}

TEST(ProcessTest, CapsOutput) {
  const ProcessResult r = run_process({"sh", "-c", "yes | head -c 1000000; yes 1>&2 | head -c 100000 1>&2"}, 10s,
                                      {.max_stdout = 1000, .max_stderr = 100});
  EXPECT_TRUE(r.output_overflow);
  EXPECT_FALSE(r.ok());
  EXPECT_LE(r.out.size(), 1000u);

  const ProcessResult tail = run_process({"sh", "-c", "seq 1 100000 >&2"}, 10s, {.max_stderr = 100});
  EXPECT_TRUE(tail.ok());
  EXPECT_EQ(tail.err.size(), 100u);
  EXPECT_EQ(tail.err.substr(tail.err.size() - 7), "100000\n") << "the tail is kept";
  EXPECT_EQ(stderr_tail("a\nb\n" + std::string(20, 'x'), 10), "..." + std::string(10, 'x'));
}

TEST(ProcessTest, LimitsTheAddressSpace) {
  // 64 MiB is plenty for sh, and too little for a 200 MiB allocation.
  EXPECT_TRUE(run_process({"sh", "-c", "true"}, 10s, {.max_address_space = 64u << 20}).ok());
  const ProcessResult r =
      run_process({"python3", "-c", "b = bytearray(200 << 20)"}, 30s, {.max_address_space = 64u << 20});
  if (!r.started) GTEST_SKIP() << "no python3";
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("MemoryError"), std::string::npos) << r.err;
}

TEST(ProcessTest, ReportsAToolThatCannotStart) {
  const ProcessResult r = run_process({"/nonexistent/tool"}, 10s);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.spawn_errno, 0);
  EXPECT_EQ(describe_failure("/nonexistent/tool", r, 10s), "cannot run /nonexistent/tool: No such file or directory");
}

TEST(ProcessTest, StopsWhenCancelled) {
  std::atomic<bool> cancel{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(300ms);
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({"sleep", "30"}, 60s, {.cancel = &cancel});
  setter.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(describe_failure("sleep", r, 60s).rfind("sleep was stopped", 0), 0u);
}

}  // namespace
}  // namespace scribe::media
