#include "media/audio_decoder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/media_scratch.h"

namespace scribe::media {
namespace {

namespace fs = std::filesystem;

struct Decoded {
  DecodedInfo info;
  int64_t sink_samples = 0;
  double rms = 0;
  size_t largest_chunk = 0;
};

// Fixtures are made once per run with flite, sox and ffmpeg in a temporary
// directory: one spoken sentence, encoded into every container the service
// accepts.
class AudioDecoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::make_unique<testing::MediaScratch>("scribe_decoder_test");
    // Long enough (about 8 s) that an MP3 in AVI, which keeps the encoder's
    // padding (about 0.1 s), stays within 2% of the length.
    sh("flite -voice slt -t 'Thieves who rob friends deserve jail. The salt breeze came across from the sea. "
       "A pot of tea helps to pass the evening.' -o speech.wav");
  }
  static void TearDownTestSuite() { scratch_.reset(); }

  static std::string path(const std::string& name) { return scratch_->path(name); }

  static void sh(const std::string& command) { ASSERT_TRUE(scratch_->sh(command)) << command; }

  static void ffmpeg(const std::string& args) { sh("ffmpeg -nostdin -y -loglevel error " + args); }

  static Decoded decode(const std::string& name) {
    Decoded d;
    double sum = 0;
    d.info = decode_audio(path(name), [&](const int16_t* s, size_t n) {
      for (size_t i = 0; i < n; ++i) sum += double(s[i]) * s[i];
      d.sink_samples += int64_t(n);
      d.largest_chunk = std::max(d.largest_chunk, n);
    });
    d.rms = d.sink_samples ? std::sqrt(sum / double(d.sink_samples)) : 0;
    return d;
  }

  static std::string error_code(const std::string& name) {
    try {
      decode(name);
    } catch (const MediaError& e) {
      return e.code();
    }
    return "decoded";
  }

  static void truncate_to(const std::string& name, const std::string& out, double share) {
    sh("cp " + name + " " + out);
    fs::resize_file(path(out), uintmax_t(double(fs::file_size(path(name))) * share));
  }

  static inline std::unique_ptr<testing::MediaScratch> scratch_;
};

TEST_F(AudioDecoderTest, DecodesEveryContainerToTheSameLength) {
  const Decoded reference = decode("speech.wav");
  const double seconds = reference.info.duration_seconds;
  ASSERT_GT(seconds, 6.0);
  EXPECT_EQ(reference.info.samples, reference.sink_samples);
  EXPECT_NEAR(reference.info.container_duration, seconds, 0.01);
  EXPECT_GT(reference.rms, 500);

  ffmpeg("-i speech.wav -c:a libmp3lame s.mp3");
  ffmpeg("-i speech.wav -c:a aac s.m4a");
  ffmpeg("-i speech.wav -c:a libopus s.ogg");
  ffmpeg("-i speech.wav -c:a libopus s.webm");
  ffmpeg("-i speech.wav -c:a flac s.flac");
  ffmpeg("-i speech.wav -c:a aac s.mov");
  ffmpeg("-i speech.wav -c:a libmp3lame s.avi");
  // Stereo at 44.1 kHz exercises the downmix and the resampler.
  ffmpeg("-i speech.wav -ac 2 -ar 44100 -c:a pcm_s16le stereo44.wav");
  // A video with a soundtrack: the video stream is skipped.
  ffmpeg("-f lavfi -i testsrc=size=160x120:rate=10 -i speech.wav -shortest -c:v mpeg4 -c:a aac video.mp4");
  for (const char* name :
       {"s.mp3", "s.m4a", "s.ogg", "s.webm", "s.flac", "s.mov", "s.avi", "stereo44.wav", "video.mp4"}) {
    SCOPED_TRACE(name);
    const Decoded d = decode(name);
    EXPECT_EQ(d.info.samples, d.sink_samples);
    EXPECT_NEAR(double(d.info.samples), seconds * kSampleRate, 0.02 * seconds * kSampleRate);
    EXPECT_NEAR(d.info.duration_seconds, double(d.info.samples) / kSampleRate, 1e-9);
    EXPECT_GT(d.rms, 0.5 * reference.rms);
    EXPECT_LT(d.rms, 1.5 * reference.rms);
    EXPECT_LE(d.largest_chunk, 16384u);
    EXPECT_FALSE(d.info.title.has_value());
  }
}

TEST_F(AudioDecoderTest, DecodesRecordedSpeech) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator("/usr/share/pocketsphinx/test/data/librivox")) {
    if (entry.path().extension() != ".wav") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    double sum = 0;
    const DecodedInfo info = decode_audio(entry.path().string(), [&](const int16_t* s, size_t n) {
      for (size_t i = 0; i < n; ++i) sum += double(s[i]) * s[i];
    });
    EXPECT_GT(info.samples, kSampleRate);
    EXPECT_NEAR(info.duration_seconds, info.container_duration, 0.05);
    EXPECT_GT(std::sqrt(sum / double(info.samples)), 100);
  }
  EXPECT_GE(files, 1);
}

TEST_F(AudioDecoderTest, ReadsTheTitle) {
  ffmpeg("-i speech.wav -metadata title=Hello t.mp3");
  ffmpeg("-i speech.wav -c:a libopus -metadata title='Hello there' t.ogg");
  EXPECT_EQ(decode("t.mp3").info.title, "Hello");
  EXPECT_EQ(decode("t.ogg").info.title, "Hello there");
}

TEST_F(AudioDecoderTest, RejectsFilesThatAreNotMedia) {
  std::ofstream(path("notes.mp3")) << "These are meeting notes, not audio.\n";
  EXPECT_EQ(error_code("notes.mp3"), "media_undecodable");
  std::ofstream(path("empty.wav")).close();
  EXPECT_EQ(error_code("empty.wav"), "media_undecodable");
  EXPECT_EQ(error_code("does_not_exist.wav"), "media_undecodable");
}

TEST_F(AudioDecoderTest, RejectsVideoWithoutAudio) {
  ffmpeg("-f lavfi -i testsrc=size=160x120:rate=10 -t 2 -an -c:v mpeg4 silent.mp4");
  EXPECT_EQ(error_code("silent.mp4"), "media_no_audio");
}

// What can be told of a cut-off file depends on the container: WAV (the RIFF
// header declares the data size), MP3 (the Xing/LAME header declares the frame
// count), FLAC (the last frame breaks off), WebM and MP4 with the index first
// (the index declares the length) are reported as media_truncated. An MP4/M4A
// whose index sits at the end (ffmpeg's default) loses the index and cannot be
// opened: media_undecodable. Ogg declares no length and AVI's index sits at the
// end, so a cut at a page or chunk boundary looks like a short, complete file.
TEST_F(AudioDecoderTest, ReportsTruncatedFiles) {
  ffmpeg("-i speech.wav -c:a libmp3lame s.mp3");
  ffmpeg("-i speech.wav -c:a aac m.m4a");
  ffmpeg("-i speech.wav -c:a aac -movflags +faststart fast.m4a");
  ffmpeg("-i speech.wav -c:a flac f.flac");
  ffmpeg("-i speech.wav -c:a libopus w.webm");
  truncate_to("speech.wav", "cut.wav", 0.4);
  truncate_to("speech.wav", "half.wav", 0.5);
  truncate_to("s.mp3", "cut.mp3", 0.4);
  truncate_to("fast.m4a", "cut_fast.m4a", 0.5);
  truncate_to("f.flac", "cut.flac", 0.4);
  truncate_to("w.webm", "cut.webm", 0.4);
  truncate_to("m.m4a", "cut.m4a", 0.5);
  for (const char* name : {"cut.wav", "half.wav", "cut.mp3", "cut_fast.m4a", "cut.flac", "cut.webm"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(error_code(name), "media_truncated");
  }
  EXPECT_EQ(error_code("cut.m4a"), "media_undecodable");
  // Cutting into the header leaves nothing to decode.
  truncate_to("s.mp3", "stub.mp3", 0.001);
  EXPECT_NE(error_code("stub.mp3"), "decoded");
}

TEST_F(AudioDecoderTest, SinkExceptionAbortsDecoding) {
  struct Stop {};
  int calls = 0;
  EXPECT_THROW(decode_audio(path("speech.wav"),
                            [&](const int16_t*, size_t) {
                              if (++calls == 3) throw Stop{};
                            }),
               Stop);
  EXPECT_EQ(calls, 3);
  // The decoder is left in no state that affects the next call.
  EXPECT_GT(decode("speech.wav").info.samples, 0);
}

}  // namespace
}  // namespace scribe::media
