#include "api/deep_link.h"

#include <gtest/gtest.h>

namespace scribe::api {
namespace {

const std::string kBase = "https://scribe.example.com";

TEST(DeepLink, VideoLinksGetATimeQueryParameter) {
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://www.youtube.com/watch?v=abc", 83'999),
            "https://www.youtube.com/watch?v=abc&t=83");
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://youtu.be/abc", 1'000), "https://youtu.be/abc?t=1");
  EXPECT_EQ(deep_link(kBase, 7, "platform_url", "https://podcasts.example.com/ep/1", 0),
            "https://podcasts.example.com/ep/1?t=0");
}

TEST(DeepLink, AnEarlierTimeParameterIsReplacedAndTheFragmentKept) {
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://www.youtube.com/watch?t=30&v=abc", 61'000),
            "https://www.youtube.com/watch?v=abc&t=61");
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://www.youtube.com/watch?v=abc&t=30s#top", 5'500),
            "https://www.youtube.com/watch?v=abc&t=5#top");
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://youtu.be/abc?", 2'000), "https://youtu.be/abc?t=2");
  // Only a parameter named exactly `t` goes; `tt` and `st` stay.
  EXPECT_EQ(deep_link(kBase, 7, "video_site", "https://v.example.com/x?tt=1&st=2", 3'000),
            "https://v.example.com/x?tt=1&st=2&t=3");
}

TEST(DeepLink, DirectMediaGetsAMediaFragmentAndKeepsItsSignedQuery) {
  EXPECT_EQ(deep_link(kBase, 7, "external_url", "https://cdn.example.com/a.mp3?X-Amz-Signature=ff", 12'345),
            "https://cdn.example.com/a.mp3?X-Amz-Signature=ff#t=12");
  EXPECT_EQ(deep_link(kBase, 7, "external_url", "https://cdn.example.com/a.mp3#t=99", 1'000),
            "https://cdn.example.com/a.mp3#t=1");
}

TEST(DeepLink, UploadsAndUnknownLinksPointAtThePlayer) {
  EXPECT_EQ(deep_link(kBase, 42, "upload", std::nullopt, 90'500),
            "https://scribe.example.com/app/transcriptions/42?t=90");
  EXPECT_EQ(deep_link(kBase + "/", 42, "upload", std::nullopt, 0),
            "https://scribe.example.com/app/transcriptions/42?t=0");
  EXPECT_EQ(deep_link(kBase, 42, "video_site", std::nullopt, 1'000),
            "https://scribe.example.com/app/transcriptions/42?t=1");
  EXPECT_EQ(deep_link(kBase, 42, "external_url", std::string(), -5),
            "https://scribe.example.com/app/transcriptions/42?t=0");
}

}  // namespace
}  // namespace scribe::api
