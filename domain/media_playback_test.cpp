#include "domain/media_playback.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "domain/clip.h"
#include "domain/transcript_artifact.h"

namespace scribe::playback {
namespace {

const char* kMov = "mov,mp4,m4a,3gp,3g2,mj2";

Probe probe(const std::string& format, std::vector<Stream> streams) { return Probe{format, std::move(streams), 4.0}; }

TEST(Playback, AudioFormatsBrowsersPlayAreServedAsTheyAre) {
  struct Case {
    const char* format;
    const char* codec;
    const char* type;
  };
  for (const auto& c :
       {Case{"mp3", "mp3", "audio/mpeg"}, Case{"aac", "aac", "audio/aac"}, Case{"flac", "flac", "audio/flac"},
        Case{"wav", "pcm_s16le", "audio/wav"}, Case{"wav", "pcm_f32le", "audio/wav"}, Case{"ogg", "opus", "audio/ogg"},
        Case{"ogg", "vorbis", "audio/ogg"}, Case{kMov, "aac", "audio/mp4"},
        Case{"matroska,webm", "opus", "audio/webm"}}) {
    const Decision d = decide(probe(c.format, {{"audio", c.codec}}));
    EXPECT_TRUE(d.playable) << c.format << " " << c.codec;
    EXPECT_EQ(d.kind, Kind::Audio) << c.format;
    EXPECT_EQ(d.content_type, c.type) << c.format << " " << c.codec;
  }
}

TEST(Playback, VideoInMp4OrWebmWithBrowserCodecsIsPlayable) {
  Decision d = decide(probe(kMov, {{"video", "h264"}, {"audio", "aac"}}));
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.kind, Kind::Video);
  EXPECT_EQ(d.content_type, "video/mp4");
  d = decide(probe("matroska,webm", {{"video", "vp9"}, {"audio", "opus"}}));
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.content_type, "video/webm");
  d = decide(probe("matroska,webm", {{"video", "vp8"}, {"audio", "vorbis"}}));
  EXPECT_TRUE(d.playable);
}

TEST(Playback, OtherContainersAndCodecsNeedARendition) {
  // AVI, whatever it carries; QuickTime with codecs Chromium lacks; PCM in a
  // QuickTime; H.264 in Matroska; AC-3 in MP4; Theora in Ogg; AMR.
  const std::vector<Probe> cases = {
      probe("avi", {{"video", "h264"}, {"audio", "mp3"}}),
      probe("avi", {{"video", "mpeg4"}, {"audio", "pcm_s16le"}}),
      probe(kMov, {{"video", "prores"}, {"audio", "pcm_s16le"}}),
      probe(kMov, {{"video", "h264"}, {"audio", "pcm_s16le"}}),
      probe(kMov, {{"video", "hevc"}, {"audio", "aac"}}),
      probe(kMov, {{"audio", "ac3"}}),
      probe("matroska,webm", {{"video", "h264"}, {"audio", "aac"}}),
      probe("matroska,webm", {{"audio", "aac"}}),
      probe("ogg", {{"video", "theora"}, {"audio", "vorbis"}}),
      probe("amr", {{"audio", "amr_nb"}}),
      probe("asf", {{"audio", "wmav2"}}),
      probe("wav", {{"audio", "adpcm_ms"}}),
  };
  for (const auto& p : cases) {
    const Decision d = decide(p);
    EXPECT_FALSE(d.playable) << p.format_name << " " << p.streams.front().codec;
    EXPECT_EQ(d.content_type, "");
  }
  EXPECT_EQ(decide(cases[0]).kind, Kind::Video);
  EXPECT_EQ(decide(cases[5]).kind, Kind::Audio);
}

TEST(Playback, CoverArtIsNotVideoAndOtherStreamsAreIgnored) {
  Decision d = decide(probe("mp3", {{"audio", "mp3"}, {"video", "mjpeg", true}}));
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.kind, Kind::Audio);
  EXPECT_EQ(d.content_type, "audio/mpeg");
  d = decide(probe(kMov, {{"audio", "aac"}, {"video", "png", true}, {"data", "bin_data"}, {"subtitle", "mov_text"}}));
  EXPECT_TRUE(d.playable);
  EXPECT_EQ(d.content_type, "audio/mp4");
}

TEST(Playback, NothingToPlayIsNotPlayable) {
  EXPECT_FALSE(decide(probe("mp3", {})).playable);
  EXPECT_FALSE(decide(probe("mp3", {{"video", "mjpeg", true}})).playable);
  // Video without sound plays (muted) when its codec does.
  EXPECT_TRUE(decide(probe(kMov, {{"video", "h264"}})).playable);
}

TEST(Playback, RenditionTypes) {
  EXPECT_EQ(rendition_content_type(Kind::Audio), "audio/mp4");
  EXPECT_EQ(rendition_content_type(Kind::Video), "video/mp4");
  EXPECT_STREQ(to_string(Kind::Video), "video");
  EXPECT_STREQ(to_string(Kind::Audio), "audio");
}

TEST(Playback, VideoDurationMustMatchTheTranscriptionsWithinTheTolerance) {
  EXPECT_DOUBLE_EQ(duration_tolerance(10), 1.0);     // short: a second
  EXPECT_DOUBLE_EQ(duration_tolerance(3600), 18.0);  // an hour: 0.5%
  EXPECT_TRUE(durations_match(10, 10.9));
  EXPECT_TRUE(durations_match(10, 9.0));
  EXPECT_FALSE(durations_match(10, 11.2));
  EXPECT_FALSE(durations_match(10, 20));
  EXPECT_TRUE(durations_match(3600, 3617));
  EXPECT_FALSE(durations_match(3600, 3619));
  EXPECT_FALSE(durations_match(10, 0));
  EXPECT_FALSE(durations_match(10, std::nan("")));
}

}  // namespace
}  // namespace scribe::playback

namespace scribe::playback {
namespace {

TEST(PlaybackKeys, SourcesAndRenditionsLiveWhereClipsAndDeletionLook) {
  EXPECT_EQ(source_key(7, "upload", std::string("upl_abc")), "uploads/upl_abc");
  EXPECT_EQ(source_key(7, "upload", std::nullopt), std::nullopt);
  EXPECT_EQ(source_key(7, "video", std::nullopt), clip::source_video_key(7));
  EXPECT_EQ(source_key(7, "audio", std::nullopt), clip::source_audio_key(7));
  EXPECT_EQ(source_key(7, "../x", std::nullopt), std::nullopt);
  const std::string prefix = transcript::transcription_prefix(7);
  EXPECT_EQ(rendition_key(7, "upload").rfind(prefix, 0), 0u);
  EXPECT_NE(rendition_key(7, "upload"), rendition_key(7, "video"));
  EXPECT_EQ(preferred_sources("upload"), (std::vector<std::string>{"video", "upload"}));
  EXPECT_EQ(preferred_sources("video_site"), (std::vector<std::string>{"video", "audio"}));
  EXPECT_EQ(preferred_sources("realtime"), (std::vector<std::string>{"audio"}));
}

TEST(PlaybackKeys, LinksAreSignedForOneTranscriptionNameAndExpiry) {
  const int64_t exp = 1'800'000'000;
  const std::string url = link("http://h", "secret", 7, "upload", exp);
  EXPECT_EQ(url.rfind("http://h/media/files/7/upload?expires=1800000000&signature=", 0), 0u) << url;
  const std::string sig = link_signature("secret", 7, "upload", exp);
  EXPECT_NE(url.find(sig), std::string::npos);
  EXPECT_TRUE(verify_link("secret", 7, "upload", exp, sig, exp));
  EXPECT_FALSE(verify_link("secret", 7, "upload", exp, sig, exp + 1));  // expired
  EXPECT_FALSE(verify_link("secret", 8, "upload", exp, sig, exp));
  EXPECT_FALSE(verify_link("secret", 7, "upload.playable", exp, sig, exp));
  EXPECT_FALSE(verify_link("secret", 7, "upload", exp + 1, sig, exp));
  EXPECT_FALSE(verify_link("other", 7, "upload", exp, sig, exp));
  // A clip link's signature never opens a media file.
  EXPECT_FALSE(verify_link("secret", 7, "upload", exp, clip::link_signature("secret", 7, "upload", exp), exp));
}

}  // namespace
}  // namespace scribe::playback

namespace scribe::playback {
namespace {

Error added_error(const std::string& source, std::optional<double> seconds, const Probe& p) {
  try {
    check_added_video(source, seconds, "upl_x", p);
  } catch (const Error& e) {
    return e;
  }
  return Error("none", "no error");
}

TEST(AddedVideo, MustBeAVideoOfTheSameLengthAddedToAnUpload) {
  const Probe video{"avi", {{"video", "mpeg4"}, {"audio", "mp3"}}, 10.4};
  EXPECT_NO_THROW(check_added_video("upload", 10.0, "upl_x", video));

  Error e = added_error("video_site", 10.0, video);
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(e.extras().value("reason", ""), "not_an_upload");
  EXPECT_EQ(added_error("realtime", 10.0, video).extras().value("reason", ""), "not_an_upload");

  EXPECT_EQ(added_error("upload", std::nullopt, video).code(), "not_ready");

  e = added_error("upload", 10.0, Probe{"mp3", {{"audio", "mp3"}, {"video", "mjpeg", true}}, 10.0});
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(e.extras().value("field", ""), "upload_id");
  EXPECT_EQ(e.extras().value("reason", ""), "no_video_stream");

  e = added_error("upload", 10.0, Probe{"avi", {{"video", "mpeg4"}}, std::nullopt});
  EXPECT_EQ(e.extras().value("reason", ""), "no_duration");

  e = added_error("upload", 10.0, Probe{"avi", {{"video", "mpeg4"}}, 14.0});
  EXPECT_EQ(e.code(), "invalid_request");
  EXPECT_EQ(e.extras().value("reason", ""), "duration_mismatch");
  EXPECT_DOUBLE_EQ(e.extras().value("video_duration_seconds", 0.0), 14.0);
  EXPECT_DOUBLE_EQ(e.extras().value("tolerance_seconds", 0.0), 1.0);
  EXPECT_NE(e.message().find("14.00 s"), std::string::npos) << e.message();
}

TEST(AddedVideo, EventNamesTheUploadAndTheLength) {
  const auto e = video_added(7, 3, "upl_x", 10.5, *parse_iso8601("2026-11-28T04:00:00.000Z"));
  EXPECT_EQ(e.type, "TranscriptionVideoAdded");
  EXPECT_EQ(e.data.at("transcription_id"), 7);
  EXPECT_EQ(e.data.at("account_id"), 3);
  EXPECT_EQ(e.data.at("upload_id"), "upl_x");
  EXPECT_DOUBLE_EQ(e.data.at("video_duration_seconds").get<double>(), 10.5);
  EXPECT_EQ(e.data.at("added_at"), "2026-11-28T04:00:00.000Z");
}

}  // namespace
}  // namespace scribe::playback
