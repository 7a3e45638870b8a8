#include "speech/openai_asr_engine.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/text.h"

namespace scribe::speech {
namespace {

uint32_t le(const std::string& s, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

TEST(OpenAiAsr, WavHeaderDescribes16kMono16Bit) {
  const int16_t pcm[] = {0, 1, -1, 32767, -32768};
  std::string wav = encode_wav(pcm, 5);
  ASSERT_EQ(wav.size(), 44u + 10u);
  EXPECT_EQ(wav.substr(0, 4), "RIFF");
  EXPECT_EQ(le(wav, 4, 4), 36u + 10u);
  EXPECT_EQ(wav.substr(8, 8), "WAVEfmt ");
  EXPECT_EQ(le(wav, 16, 4), 16u);     // fmt chunk size
  EXPECT_EQ(le(wav, 20, 2), 1u);      // PCM
  EXPECT_EQ(le(wav, 22, 2), 1u);      // channels
  EXPECT_EQ(le(wav, 24, 4), 16000u);  // sample rate
  EXPECT_EQ(le(wav, 28, 4), 32000u);  // byte rate
  EXPECT_EQ(le(wav, 32, 2), 2u);      // block align
  EXPECT_EQ(le(wav, 34, 2), 16u);     // bits per sample
  EXPECT_EQ(wav.substr(36, 4), "data");
  EXPECT_EQ(le(wav, 40, 4), 10u);
  EXPECT_EQ(le(wav, 44, 2), 0u);
  EXPECT_EQ(le(wav, 46, 2), 1u);
  EXPECT_EQ(le(wav, 48, 2), 0xFFFFu);
  EXPECT_EQ(le(wav, 50, 2), 0x7FFFu);
  EXPECT_EQ(le(wav, 52, 2), 0x8000u);
}

TEST(OpenAiAsr, EmptyWavIsJustAHeader) {
  std::string wav = encode_wav(nullptr, 0);
  ASSERT_EQ(wav.size(), 44u);
  EXPECT_EQ(le(wav, 40, 4), 0u);
}

TEST(OpenAiAsr, MultipartBodyIsWellFormed) {
  std::string binary("RIFF\0\r\n--x", 10);
  std::string body = build_multipart_body(
      {{"file", binary, "piece.wav", "audio/wav"}, {"model", "whisper-1", std::nullopt, std::nullopt}}, "b0undary");
  std::string expected =
      "--b0undary\r\n"
      "Content-Disposition: form-data; name=\"file\"; filename=\"piece.wav\"\r\n"
      "Content-Type: audio/wav\r\n"
      "\r\n" +
      binary +
      "\r\n"
      "--b0undary\r\n"
      "Content-Disposition: form-data; name=\"model\"\r\n"
      "\r\n"
      "whisper-1\r\n"
      "--b0undary--\r\n";
  EXPECT_EQ(body, expected);
}

TEST(OpenAiAsr, MultipartRefusesAValueContainingTheBoundary) {
  EXPECT_THROW(build_multipart_body({{"f", "a\r\n--bb\r\n", std::nullopt, std::nullopt}}, "bb"), std::invalid_argument);
}

TEST(OpenAiAsr, BoundariesAreRandomAndTokenSafe) {
  std::string a = random_multipart_boundary();
  std::string b = random_multipart_boundary();
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 7u + 32u);
  EXPECT_EQ(a.substr(0, 7), "scribe-");
  EXPECT_EQ(a.find_first_not_of("scribe-0123456789abcdef"), std::string::npos);
}

TEST(OpenAiAsr, TranscriptionsUrlFromBaseUrl) {
  EXPECT_EQ(openai_transcriptions_url("http://gpu-box:8000"), "http://gpu-box:8000/v1/audio/transcriptions");
  EXPECT_EQ(openai_transcriptions_url("http://gpu-box:8000/"), "http://gpu-box:8000/v1/audio/transcriptions");
  EXPECT_EQ(openai_transcriptions_url("https://api.openai.com/v1"), "https://api.openai.com/v1/audio/transcriptions");
  EXPECT_EQ(openai_transcriptions_url("http://h/v1/audio/transcriptions"), "http://h/v1/audio/transcriptions");
}

TEST(OpenAiAsr, LanguageNamesMapToIsoCodes) {
  EXPECT_EQ(openai_language_code("english"), "en");
  EXPECT_EQ(openai_language_code("German"), "de");
  EXPECT_EQ(openai_language_code("en"), "en");
  EXPECT_EQ(openai_language_code("EN"), "en");
  EXPECT_EQ(openai_language_code("pt-BR"), "pt");
  EXPECT_EQ(openai_language_code("yue"), "yue");
  EXPECT_EQ(openai_language_code("klingonese"), std::nullopt);
  EXPECT_EQ(openai_language_code(""), std::nullopt);
}

// OpenAI's documented verbose_json with timestamp_granularities[]=word: words
// without punctuation, punctuation only in `text`.
TEST(OpenAiAsr, ParsesOpenAiShape) {
  const char* body = R"({
    "task": "transcribe", "language": "english", "duration": 2.47,
    "text": "The beach was popular. People swam, mostly.",
    "words": [
      {"word": "The", "start": 0.0, "end": 0.24},
      {"word": "beach", "start": 0.24, "end": 0.5},
      {"word": "was", "start": 0.5, "end": 0.7},
      {"word": "popular", "start": 0.7, "end": 1.1},
      {"word": "People", "start": 1.4, "end": 1.7},
      {"word": "swam", "start": 1.7, "end": 2.0},
      {"word": "mostly", "start": 2.0, "end": 2.47}
    ]})";
  Recognition r = parse_verbose_json(body, 2.5);
  EXPECT_EQ(r.language, "en");
  ASSERT_EQ(r.words.size(), 7u);
  EXPECT_EQ(r.words[0].text, "The");
  EXPECT_EQ(r.words[1].text, "beach");  // "a" in "beach" is not mistaken for a word
  EXPECT_EQ(r.words[3].text, "popular.");
  EXPECT_EQ(r.words[5].text, "swam,");
  EXPECT_EQ(r.words[6].text, "mostly.");
  EXPECT_DOUBLE_EQ(r.words[4].start, 1.4);
  EXPECT_DOUBLE_EQ(r.words[4].end, 1.7);
  EXPECT_DOUBLE_EQ(r.words[4].confidence, 1.0);  // no probability given
}

// whisper.cpp server (examples/server) verbose_json: no top-level words;
// per-segment "words" are tokens with leading spaces, sub-word pieces and
// punctuation tokens, with t_dtw and probability.
TEST(OpenAiAsr, ParsesWhisperCppShape) {
  const char* body = R"({"task":"transcribe","language":"english","duration":3.0,
    "text":" And so my fellow Americans, ask.",
    "segments":[
      {"id":0,"text":" And so my fellow Americans,","start":0.0,"end":2.0,
       "tokens":[400,370,452,7177,6280,11],
       "words":[
        {"word":"[_BEG_]","start":0.0,"end":0.0,"t_dtw":-1,"probability":0.9},
        {"word":" And","start":0.0,"end":0.32,"t_dtw":-1,"probability":0.87},
        {"word":" so","start":0.32,"end":0.5,"t_dtw":-1,"probability":0.99},
        {"word":" my","start":0.5,"end":0.7,"t_dtw":-1,"probability":0.95},
        {"word":" fel","start":0.7,"end":0.9,"t_dtw":-1,"probability":0.8},
        {"word":"low","start":0.9,"end":1.1,"t_dtw":-1,"probability":0.6},
        {"word":" Americans","start":1.1,"end":1.9,"t_dtw":-1,"probability":0.97},
        {"word":",","start":1.9,"end":2.0,"t_dtw":-1,"probability":0.5}],
       "temperature":0.0,"avg_logprob":-0.2,"no_speech_prob":0.01},
      {"id":1,"text":" ask.","start":2.0,"end":3.0,"tokens":[1029,13],
       "words":[
        {"word":" ask","start":2.2,"end":2.8,"t_dtw":-1,"probability":0.9},
        {"word":".","start":2.8,"end":3.0,"t_dtw":-1,"probability":0.9}],
       "temperature":0.0,"avg_logprob":-0.1,"no_speech_prob":0.01}]})";
  Recognition r = parse_verbose_json(body, 3.0);
  EXPECT_EQ(r.language, "en");
  std::vector<std::string> texts;
  for (const auto& w : r.words) texts.push_back(w.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"And", "so", "my", "fellow", "Americans,", "ask."}));
  EXPECT_DOUBLE_EQ(r.words[3].start, 0.7);
  EXPECT_DOUBLE_EQ(r.words[3].end, 1.1);
  EXPECT_DOUBLE_EQ(r.words[3].confidence, 0.6);  // the weakest piece
  EXPECT_DOUBLE_EQ(r.words[4].end, 1.9);         // the comma does not stretch the word
  EXPECT_DOUBLE_EQ(r.words[0].confidence, 0.87);
}

// speaches / faster-whisper: top-level words with leading spaces and
// punctuation attached, language as a code.
TEST(OpenAiAsr, ParsesFasterWhisperShape) {
  const char* body = R"({"task":"transcribe","language":"de","duration":1.2,"text":"Hallo, Welt.",
    "words":[{"start":0.0,"end":0.5,"word":" Hallo,","probability":0.93},
             {"start":0.6,"end":1.1,"word":" Welt.","probability":0.88}],
    "segments":[{"id":0,"start":0.0,"end":1.2,"text":" Hallo, Welt."}]})";
  Recognition r = parse_verbose_json(body, 1.2);
  EXPECT_EQ(r.language, "de");
  ASSERT_EQ(r.words.size(), 2u);
  EXPECT_EQ(r.words[0].text, "Hallo,");
  EXPECT_EQ(r.words[1].text, "Welt.");
  EXPECT_DOUBLE_EQ(r.words[1].confidence, 0.88);
}

TEST(OpenAiAsr, SegmentsWithoutWordsAreSpreadEvenly) {
  const char* body = R"({"language":"french","text":"un deux trois quatre",
    "segments":[{"start":1.0,"end":2.0,"text":" un deux"},{"start":2.0,"end":4.0,"text":" trois quatre"}]})";
  Recognition r = parse_verbose_json(body, 4.0);
  EXPECT_EQ(r.language, "fr");
  ASSERT_EQ(r.words.size(), 4u);
  EXPECT_DOUBLE_EQ(r.words[0].start, 1.0);
  EXPECT_DOUBLE_EQ(r.words[0].end, 1.5);
  EXPECT_DOUBLE_EQ(r.words[1].start, 1.5);
  EXPECT_DOUBLE_EQ(r.words[3].start, 3.0);
  EXPECT_DOUBLE_EQ(r.words[3].end, 4.0);
}

TEST(OpenAiAsr, PlainTextIsSpreadOverThePiece) {
  Recognition r = parse_verbose_json(R"({"text":"hello there"})", 2.0);
  EXPECT_EQ(r.language, std::nullopt);
  ASSERT_EQ(r.words.size(), 2u);
  EXPECT_DOUBLE_EQ(r.words[1].start, 1.0);
  EXPECT_DOUBLE_EQ(r.words[1].end, 2.0);
}

TEST(OpenAiAsr, SilenceGivesNoWords) {
  EXPECT_TRUE(parse_verbose_json(R"({"language":"english","text":"","segments":[]})", 1.0).words.empty());
}

TEST(OpenAiAsr, NonJsonIsAnError) {
  EXPECT_THROW(parse_verbose_json("<html>bad gateway</html>", 1.0), std::runtime_error);
  EXPECT_THROW(parse_verbose_json("[1,2]", 1.0), std::runtime_error);
}

TEST(OpenAiAsr, FactoryRefusesANonHttpUrl) {
  OpenAiAsrOptions o;
  o.base_url = "ftp://gpu-box";
  EXPECT_THROW(OpenAiAsrEngineFactory{o}, std::invalid_argument);
}

// Link-local addresses (cloud metadata) stay refused although this client
// allows private ones; the refusal comes before any connection.
TEST(OpenAiAsr, LinkLocalServerIsRefused) {
  OpenAiAsrOptions o;
  o.base_url = "http://169.254.169.254";
  OpenAiAsrEngineFactory factory(o);
  const int16_t pcm[160] = {};
  EXPECT_THROW(factory.make()->recognize(pcm, 160, "auto", {}), std::runtime_error);
}

// A one-request HTTP server on 127.0.0.1 (a thread with a plain POSIX accept
// loop) that records the request and answers with a fixed response.
class OneShotServer {
 public:
  explicit OneShotServer(std::string response) : response_(std::move(response)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 1) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneShotServer() {
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  // The request as received (head and body); waits for the server thread.
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void serve() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) return;  // no client within 10 s: the test fails on request()
    int client = accept(fd_, nullptr, nullptr);
    if (client < 0) return;
    timeval tv{10, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t content_length = 0;
    size_t head_end = std::string::npos;
    char buf[8192];
    for (;;) {
      if (head_end != std::string::npos && request_.size() >= head_end + 4 + content_length) break;
      ssize_t n = recv(client, buf, sizeof buf, 0);
      if (n <= 0) break;
      request_.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos && (head_end = request_.find("\r\n\r\n")) != std::string::npos) {
        const std::string head = to_lower(request_.substr(0, head_end));
        auto at = head.find("content-length:");
        if (at != std::string::npos) content_length = std::strtoul(head.c_str() + at + 15, nullptr, 10);
      }
    }
    size_t sent = 0;
    while (sent < response_.size()) {
      ssize_t n = send(client, response_.data() + sent, response_.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    close(client);
  }

  std::string response_;
  std::string request_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string http_response(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

// A protocol test of the adapter, not of any recognizer: the engine made by
// the factory talks to a stand-in server on loopback through HttpClient, and
// the test checks what went over the wire and what came back.
TEST(OpenAiAsr, EndToEndAgainstLoopbackServer) {
  OneShotServer server(http_response(200, R"({"task":"transcribe","language":"english","duration":1.0,
      "text":"Hello world.","words":[{"word":"Hello","start":0.1,"end":0.4},{"word":"world","start":0.5,"end":0.9}]})"));
  OpenAiAsrOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(server.port());
  o.model = "large-v3";
  o.api_key = "sk-test";
  OpenAiAsrEngineFactory factory(o);
  EXPECT_EQ(factory.parallelism(), 2);
  std::vector<int16_t> pcm(16000, 7);
  Recognition r = factory.make()->recognize(pcm.data(), pcm.size(), "en", {});

  const std::string& req = server.request();
  EXPECT_EQ(req.rfind("POST /v1/audio/transcriptions HTTP/1.1\r\n", 0), 0u) << req.substr(0, 80);
  EXPECT_NE(req.find("Authorization: Bearer sk-test\r\n"), std::string::npos);
  auto ct = req.find("Content-Type: multipart/form-data; boundary=");
  ASSERT_NE(ct, std::string::npos);
  std::string boundary = req.substr(ct + 44, req.find("\r\n", ct) - ct - 44);
  std::string body = req.substr(req.find("\r\n\r\n") + 4);
  EXPECT_EQ(body.rfind("--" + boundary + "\r\n", 0), 0u);
  EXPECT_NE(body.find("--" + boundary + "--\r\n"), std::string::npos);
  auto file = body.find("name=\"file\"; filename=\"piece.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF");
  ASSERT_NE(file, std::string::npos);
  EXPECT_EQ(body.substr(body.find("RIFF") + 8, 4), "WAVE");
  EXPECT_NE(body.find("name=\"model\"\r\n\r\nlarge-v3\r\n"), std::string::npos);
  EXPECT_NE(body.find("name=\"response_format\"\r\n\r\nverbose_json\r\n"), std::string::npos);
  EXPECT_NE(body.find("name=\"timestamp_granularities[]\"\r\n\r\nword\r\n"), std::string::npos);
  EXPECT_NE(body.find("name=\"language\"\r\n\r\nen\r\n"), std::string::npos);
  const size_t riff = body.find("RIFF");
  EXPECT_EQ(body.substr(riff + 44, 2), std::string("\x07\x00", 2));  // the first sample
  EXPECT_EQ(body.substr(riff + 44 + 32000, 4 + boundary.size()),
            "\r\n--" + boundary);  // all samples, then the next part

  EXPECT_EQ(r.language, "en");
  ASSERT_EQ(r.words.size(), 2u);
  EXPECT_EQ(r.words[0].text, "Hello");
  EXPECT_EQ(r.words[1].text, "world.");
  EXPECT_DOUBLE_EQ(r.words[1].start, 0.5);
}

TEST(OpenAiAsr, ServerErrorCarriesStatusAndExcerpt) {
  OneShotServer server(http_response(503, R"({"error":{"message":"model is loading"}})"));
  OpenAiAsrOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/v1";
  OpenAiAsrEngineFactory factory(o);
  const int16_t pcm[1600] = {};
  try {
    factory.make()->recognize(pcm, 1600, "auto", {});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("503"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model is loading"), std::string::npos) << e.what();
  }
  // "auto" sends no language field.
  EXPECT_EQ(server.request().find("name=\"language\""), std::string::npos);
}

}  // namespace
}  // namespace scribe::speech
