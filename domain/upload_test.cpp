// Signing of presigned URLs and resumable tickets, and the tus header readers.
#include "domain/upload.h"

#include <gtest/gtest.h>

namespace scribe::upload {
namespace {

TEST(UploadContentTypes, AcceptsExactlyTheSpecList) {
  for (const char* t :
       {"audio/mpeg", "audio/mp3", "audio/wav", "audio/m4a", "audio/mp4", "audio/x-m4a", "audio/aac", "audio/ogg",
        "audio/webm", "audio/flac", "video/mp4", "video/webm", "video/quicktime", "video/x-msvideo"})
    EXPECT_TRUE(is_allowed_content_type(t)) << t;
  // Media types are case-insensitive and parameters do not change the type
  // (this test used to refuse the first two).
  for (const char* t : {"audio/MPEG", "audio/mpeg; charset=x", "AUDIO/MPEG", " Video/QuickTime ;codecs=x"})
    EXPECT_TRUE(is_allowed_content_type(t)) << t;
  for (const char* t : {"", "text/plain", "application/octet-stream", "audio/mpeg3", "audio /mpeg", "audio/mpeg,x"})
    EXPECT_FALSE(is_allowed_content_type(t)) << t;
}

TEST(UploadContentTypes, MediaTypeIsLowerCaseWithoutParameters) {
  EXPECT_EQ(media_type("AUDIO/MPEG"), "audio/mpeg");
  EXPECT_EQ(media_type("Audio/Wav; charset=binary"), "audio/wav");
  EXPECT_EQ(media_type("\t video/mp4 \t;x=y"), "video/mp4");
  EXPECT_EQ(media_type(""), "");
}

TEST(PresignedSignature, BindsEveryField) {
  PresignedFields f{"upl_abc", "audio/mpeg", 1234, 1'900'000'000, 42};
  std::string sig = presigned_signature("key", f);
  EXPECT_EQ(sig.size(), 64u);
  EXPECT_TRUE(verify_presigned("key", f, sig));
  EXPECT_FALSE(verify_presigned("other", f, sig));
  EXPECT_FALSE(verify_presigned("key", f, sig.substr(1)));
  auto changed = [&](auto mutate) {
    PresignedFields g = f;
    mutate(g);
    return verify_presigned("key", g, sig);
  };
  EXPECT_FALSE(changed([](PresignedFields& g) { g.upload_id = "upl_abd"; }));
  EXPECT_FALSE(changed([](PresignedFields& g) { g.content_type = "audio/wav"; }));
  EXPECT_FALSE(changed([](PresignedFields& g) { g.file_size = 1235; }));
  EXPECT_FALSE(changed([](PresignedFields& g) { g.expires_unix += 1; }));
  EXPECT_FALSE(changed([](PresignedFields& g) { g.account_id = 43; }));
}

TEST(ResumableTicket, RoundTripsAndRefusesTampering) {
  Ticket t{7, 1'073'741'824, 1'900'000'000};
  std::string token = make_ticket("k", t);
  auto back = verify_ticket("k", token);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->account_id, 7);
  EXPECT_EQ(back->file_size, 1'073'741'824);
  EXPECT_EQ(back->expires_unix, 1'900'000'000);
  EXPECT_FALSE(verify_ticket("other", token));
  std::string bigger = token;
  bigger.replace(bigger.find(".1073741824."), 12, ".2073741824.");
  EXPECT_FALSE(verify_ticket("k", bigger));
  for (const char* bad : {"", "v1", "v2.7.1.1.abc", "v1.7.1.1", "v1.-7.1.1.ab", "v1.7.1.1.ab.cd"})
    EXPECT_FALSE(verify_ticket("k", bad)) << bad;
}

TEST(Base64, DecodesStandardPaddedAndRefusesTheRest) {
  EXPECT_EQ(base64_decode("").value(), "");
  EXPECT_EQ(base64_decode("Zg==").value(), "f");
  EXPECT_EQ(base64_decode("Zm8=").value(), "fo");
  EXPECT_EQ(base64_decode("Zm9v").value(), "foo");
  EXPECT_EQ(base64_decode("dGFsay5tcDM=").value(), "talk.mp3");
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!", "Zm=v"}) EXPECT_FALSE(base64_decode(bad)) << bad;
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x10 binary"})
    EXPECT_EQ(base64_decode(base64_encode(s)), s);
}

TEST(UploadMetadata, ParsesPairsAndKeysWithoutValues) {
  auto m = parse_upload_metadata("upload_token djEuMQ==,filename dGFsay5tcDM=, is_confidential");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->at("upload_token"), "v1.1");
  EXPECT_EQ(m->at("filename"), "talk.mp3");
  EXPECT_EQ(m->at("is_confidential"), "");
  EXPECT_TRUE(parse_upload_metadata("")->empty());
  EXPECT_FALSE(parse_upload_metadata("filename not-base64!"));
  EXPECT_FALSE(parse_upload_metadata("a Zg==,a Zg=="));
  EXPECT_FALSE(parse_upload_metadata(",filename Zg=="));
}

TEST(TusHeaders, LengthsAndLocators) {
  EXPECT_EQ(parse_length("0").value(), 0);
  EXPECT_EQ(parse_length("1073741824").value(), 1073741824);
  for (const char* bad : {"", "-1", "+1", "1.0", " 1", "1234567890123456789"}) EXPECT_FALSE(parse_length(bad)) << bad;
  auto l = parse_tus_locator("abc123+tok_EN-9");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->id, "abc123");
  EXPECT_EQ(l->token, "tok_EN-9");
  for (const char* bad : {"abc", "+tok", "abc+", "a/b+tok", "abc+t+k"}) EXPECT_FALSE(parse_tus_locator(bad)) << bad;
  EXPECT_EQ(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
}

}  // namespace
}  // namespace scribe::upload
