#include "api/openai/multipart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "api/openai/form_upload.h"
#include "common/crypto.h"

namespace scribe::api::openai {
namespace {

struct Part {
  std::string name;
  std::optional<std::string> filename;
  std::string type;
  std::string body;
};

// What the parser reported, as one list of parts.
struct Recorder {
  std::vector<Part> parts;
  bool open = false;
  MultipartParser::Callbacks callbacks() {
    return {[this](const PartHead& h) {
              parts.push_back({h.name, h.filename, h.content_type, ""});
              open = true;
              return true;
            },
            [this](std::string_view d) {
              parts.back().body.append(d);
              return true;
            },
            [this] {
              open = false;
              return true;
            }};
  }
};

// The body the official openai npm SDK sends (src/internal/uploads.ts,
// iterateMultipartBody): no preamble, CRLF after each part, closing CRLF.
std::string sdk_body(const std::string& boundary, const std::vector<Part>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out += "--" + boundary + "\r\n";
    out += "Content-Disposition: form-data; name=\"" + p.name + "\"";
    if (p.filename) out += "; filename=\"" + *p.filename + "\"";
    out += "\r\n";
    if (!p.type.empty()) out += "Content-Type: " + p.type + "\r\n";
    out += "\r\n" + p.body + "\r\n";
  }
  out += "--" + boundary + "--\r\n";
  return out;
}

std::string binary_audio(std::size_t n) {
  // Bytes that include CR, LF and '-' often, so delimiter prefixes appear
  // inside the data.
  std::mt19937 rng(7);
  std::string s(n, '\0');
  const char alphabet[] = {'\r', '\n', '-', '-', 'a', 'b', '\0', '\xff'};
  for (auto& c : s) c = alphabet[rng() % sizeof alphabet];
  return s;
}

const std::vector<Part> kForm = {
    {"model", std::nullopt, "", "whisper-1"},
    {"file", "talk.wav", "audio/wav", ""},
    {"timestamp_granularities[]", std::nullopt, "", "word"},
    {"timestamp_granularities[]", std::nullopt, "", "segment"},
};

TEST(OpenAiMultipart, BoundaryFromContentType) {
  EXPECT_EQ(form_data_boundary("multipart/form-data; boundary=openai-abc"), "openai-abc");
  EXPECT_EQ(form_data_boundary("Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b'c\""), "a b'c");
  EXPECT_EQ(form_data_boundary("multipart/form-data;boundary=----WebKitFormBoundary7MA4YWxk"),
            "----WebKitFormBoundary7MA4YWxk");
  EXPECT_FALSE(form_data_boundary("multipart/form-data"));
  EXPECT_FALSE(form_data_boundary("multipart/form-data; boundary="));
  EXPECT_FALSE(form_data_boundary("multipart/mixed; boundary=x"));
  EXPECT_FALSE(form_data_boundary("application/json"));
  EXPECT_FALSE(form_data_boundary("multipart/form-data; boundary=" + std::string(71, 'a')));
  EXPECT_FALSE(form_data_boundary("multipart/form-data; boundary=\"ends in space \""));
  EXPECT_FALSE(form_data_boundary("multipart/form-data; boundary=a<b"));
}

TEST(OpenAiMultipart, ParsesTheSdkBodySplitAtEveryByte) {
  std::vector<Part> form = kForm;
  // A delimiter's beginning inside the data, cut short of the boundary.
  form[1].body = binary_audio(3000) + "\r\n--boun" + binary_audio(10);
  const std::string body = sdk_body("bound", form);
  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    Recorder r;
    MultipartParser p("bound", r.callbacks());
    ASSERT_TRUE(p.feed(std::string_view(body).substr(0, cut))) << p.error();
    ASSERT_TRUE(p.feed(std::string_view(body).substr(cut))) << p.error();
    ASSERT_TRUE(p.finish()) << p.error();
    ASSERT_EQ(r.parts.size(), 4u) << "cut at " << cut;
    EXPECT_EQ(r.parts[0].name, "model");
    EXPECT_EQ(r.parts[0].body, "whisper-1");
    EXPECT_EQ(r.parts[1].filename, "talk.wav");
    EXPECT_EQ(r.parts[1].type, "audio/wav");
    EXPECT_EQ(r.parts[1].body, form[1].body) << "cut at " << cut;
    EXPECT_EQ(r.parts[3].body, "segment");
  }
}

TEST(OpenAiMultipart, ParsesOneByteAtATime) {
  std::vector<Part> form = kForm;
  form[1].body = binary_audio(5000);
  const std::string body = sdk_body("x", form);  // a one-character boundary
  Recorder r;
  MultipartParser p("x", r.callbacks());
  for (char c : body) ASSERT_TRUE(p.feed(std::string_view(&c, 1))) << p.error();
  ASSERT_TRUE(p.finish());
  ASSERT_EQ(r.parts.size(), 4u);
  EXPECT_EQ(r.parts[1].body, form[1].body);
}

TEST(OpenAiMultipart, PreambleEpilogueAndPaddingAreIgnored) {
  std::string body =
      "This is the preamble.\r\n--b  \t\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\none\r\n"
      "--b\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n\r\n--b--\r\nepilogue --b\r\n";
  Recorder r;
  MultipartParser p("b", r.callbacks());
  ASSERT_TRUE(p.feed(body)) << p.error();
  ASSERT_TRUE(p.finish());
  ASSERT_EQ(r.parts.size(), 2u);
  EXPECT_EQ(r.parts[0].body, "one");
  EXPECT_EQ(r.parts[1].body, "");  // an empty value
}

TEST(OpenAiMultipart, CurlStyleHeadersAndQuotedNames) {
  // curl -F and browsers: a CRLF-started body, percent-escaped quotes,
  // folded header lines, RFC 8187 filename*.
  std::string body =
      "\r\n--B\r\ncontent-disposition: form-data;\r\n name=\"file\"; filename=\"a%22b.mp3\"; "
      "filename*=UTF-8''caf%C3%A9.mp3\r\nCONTENT-TYPE: audio/mpeg\r\n\r\nID3\r\n--B\r\n"
      "Content-Disposition: form-data; name=\"w\\\"x\"\r\n\r\nv\r\n--B--";
  Recorder r;
  MultipartParser p("B", r.callbacks());
  ASSERT_TRUE(p.feed(body)) << p.error();
  ASSERT_TRUE(p.finish());
  ASSERT_EQ(r.parts.size(), 2u);
  EXPECT_EQ(r.parts[0].name, "file");
  EXPECT_EQ(r.parts[0].filename, "caf\xc3\xa9.mp3");
  EXPECT_EQ(r.parts[0].type, "audio/mpeg");
  EXPECT_EQ(r.parts[0].body, "ID3");
  EXPECT_EQ(r.parts[1].name, "w\"x");
}

TEST(OpenAiMultipart, MalformedBodiesAreRefused) {
  auto refuse = [](const std::string& body, const std::string& expected) {
    Recorder r;
    MultipartParser p("b", r.callbacks());
    bool ok = p.feed(body) && p.finish();
    EXPECT_FALSE(ok) << body;
    EXPECT_NE(p.error().find(expected), std::string::npos) << p.error();
    EXPECT_FALSE(p.feed("more")) << "a failed parser stays failed";
  };
  refuse("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue", "closing boundary");
  refuse("no boundary at all", "closing boundary");
  refuse("--bX\r\n", "boundary line");
  refuse("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "no Content-Disposition name");
  refuse("--b\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--b--", "not form-data");
  refuse("--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--b--", "unclosed quote");
  refuse("--b\r\nNo colon here\r\n\r\nx\r\n--b--", "no ':'");
  refuse("--b\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\nx\r\n--b--", "over 8 KiB");
  refuse("--b\r\nX-Big: " + std::string(9000, 'a'), "over 8 KiB");  // before its end arrives
}

TEST(OpenAiMultipart, ACallbackCanRefuseWithItsMessage) {
  MultipartParser* self = nullptr;
  MultipartParser p("b", {[&](const PartHead&) {
                            self->fail("no parts wanted");
                            return false;
                          },
                          [](std::string_view) { return true; }, [] { return true; }});
  self = &p;
  EXPECT_FALSE(p.feed("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--b--"));
  EXPECT_EQ(p.error(), "no parts wanted");
}

class OpenAiFormUpload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scribe-form-" + crypto::random_hex(6));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file() const { return (dir_ / "staged").string(); }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::filesystem::path dir_;
};

TEST_F(OpenAiFormUpload, WritesTheFileAndHashesItWhileItArrives) {
  std::vector<Part> form = kForm;
  form[1].body = binary_audio(200'000);
  const std::string body = sdk_body("openai-k2", form);
  FormUpload up("openai-k2", file(), 1'000'000);
  // In the server's 64 KiB pieces, and a few odd ones.
  for (std::size_t at = 0; at < body.size();) {
    std::size_t n = std::min<std::size_t>(at % 3 ? 65536 : 777, body.size() - at);
    ASSERT_TRUE(up.write(body.data() + at, n));
    at += n;
  }
  EXPECT_FALSE(up.finish());
  EXPECT_TRUE(up.has_file());
  EXPECT_EQ(up.filename(), "talk.wav");
  EXPECT_EQ(up.file_content_type(), "audio/wav");
  EXPECT_EQ(up.file_bytes(), 200'000);
  EXPECT_EQ(read(file()), form[1].body);
  EXPECT_EQ(up.file_sha256(), crypto::sha256_hex(form[1].body));
  ASSERT_EQ(up.fields().size(), 3u);
  EXPECT_EQ(up.fields()[0], (std::pair<std::string, std::string>{"model", "whisper-1"}));
  EXPECT_EQ(up.fields()[2].second, "segment");
}

TEST_F(OpenAiFormUpload, AFileOverTheLimitIsRefusedWith413AsItArrives) {
  std::vector<Part> form = kForm;
  form[1].body = std::string(5000, 'a');
  const std::string body = sdk_body("b", form);
  FormUpload up("b", file(), 4096);
  EXPECT_FALSE(up.write(body.data(), body.size()));
  auto err = up.finish();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->http_status(), 413);
  EXPECT_EQ(err->extras()["field"], "file");
}

TEST_F(OpenAiFormUpload, FieldsAreBounded) {
  std::vector<Part> big = {{"prompt", std::nullopt, "", std::string(FormUpload::kMaxFieldBytes + 1, 'p')}};
  std::string body = sdk_body("b", big);
  FormUpload up("b", file(), 4096);
  EXPECT_FALSE(up.write(body.data(), body.size()));
  auto err = up.finish();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->http_status(), 400);
  EXPECT_EQ(err->extras()["field"], "prompt");

  std::vector<Part> many(FormUpload::kMaxFields + 1, Part{"x", std::nullopt, "", "1"});
  body = sdk_body("b", many);
  FormUpload up2("b", file(), 4096);
  EXPECT_FALSE(up2.write(body.data(), body.size()));
  EXPECT_TRUE(up2.finish());
}

TEST_F(OpenAiFormUpload, TwoFilesAreRefusedAndOtherFilePartsSkipped) {
  std::vector<Part> two = {{"file", "a.wav", "", "aaa"}, {"file", "b.wav", "", "bbb"}};
  std::string body = sdk_body("b", two);
  FormUpload up("b", file(), 4096);
  EXPECT_FALSE(up.write(body.data(), body.size()));
  ASSERT_TRUE(up.finish());

  std::vector<Part> other = {{"extra", "x.bin", "", "zzz"}, {"file", "a.wav", "", "aaa"}};
  body = sdk_body("b", other);
  FormUpload up2("b", file(), 4096);
  EXPECT_TRUE(up2.write(body.data(), body.size()));
  EXPECT_FALSE(up2.finish());
  EXPECT_EQ(read(file()), "aaa");
  EXPECT_TRUE(up2.fields().empty());
}

TEST_F(OpenAiFormUpload, ABodyCutShortIsMalformed) {
  std::vector<Part> form = kForm;
  form[1].body = "abc";
  const std::string body = sdk_body("b", form);
  FormUpload up("b", file(), 4096);
  EXPECT_TRUE(up.write(body.data(), body.size() - 10));
  auto err = up.finish();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->http_status(), 400);
  EXPECT_NE(err->message().find("closing boundary"), std::string::npos);
}

TEST(Sha256, IncrementalEqualsOneShot) {
  crypto::Sha256 h;
  h.update("hello ");
  h.update("");
  h.update("world");
  EXPECT_EQ(h.hex(), crypto::sha256_hex("hello world"));
}

}  // namespace
}  // namespace scribe::api::openai
