#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/http_client.h"
#include "speech/asr_engine.h"

// A recognizer that sends each piece to an OpenAI-compatible
// `/v1/audio/transcriptions` server (whisper.cpp server, speaches, vLLM, or
// OpenAI itself) as a WAV file and reads back `verbose_json` with word times.
// The pure parts (WAV encoding, multipart body, response parsing) are free
// functions so that they can be tested without a server.
namespace scribe::speech {

struct OpenAiAsrOptions {
  std::string base_url;  // e.g. http://gpu-box:8000 (".../v1" and the full endpoint URL work too)
  std::string model = "whisper-1";
  std::optional<std::string> api_key;  // sent as "Authorization: Bearer …" when set
  std::vector<std::string> languages;  // what languages() reports
  int parallelism = 2;                 // concurrent requests
  std::chrono::seconds timeout{300};   // per request
};

// Languages Whisper models recognize well enough to offer by default.
inline constexpr const char* kDefaultOpenAiAsrLanguages = "en,de,fr,es,it,pt,nl,ja,zh,ru";

// A comma list of language codes, lower-cased, blanks and empty items
// dropped (SCRIBE_OPENAI_ASR_LANGUAGES).
std::vector<std::string> parse_asr_languages(const std::string& list);

// The transcription endpoint for a base URL: "http://h:8000" and
// "http://h:8000/v1" give "http://h:8000/v1/audio/transcriptions"; a URL that
// already ends in "/audio/transcriptions" is used as it is.
std::string openai_transcriptions_url(const std::string& base_url);

// A complete RIFF/WAVE file (44-byte header, PCM, little-endian) holding
// `count` mono 16-bit samples at `sample_rate`.
std::string encode_wav(const int16_t* pcm, size_t count, int sample_rate = kSampleRate);

struct MultipartField {
  std::string name;
  std::string value;
  std::optional<std::string> filename;      // makes it a file part
  std::optional<std::string> content_type;  // of a file part
};

// A random boundary: "scribe-" and 32 hex digits (128 bits from std::random_device).
std::string random_multipart_boundary();

// A multipart/form-data body (RFC 7578) with CRLF line ends. Throws
// std::invalid_argument when a value contains the delimiter "--boundary".
std::string build_multipart_body(const std::vector<MultipartField>& fields, const std::string& boundary);

// ISO 639-1 code for a language as a transcription server reports it: Whisper
// names ("english", "German") or codes ("en", "EN"). nullopt when unknown.
std::optional<std::string> openai_language_code(const std::string& name_or_code);

// Parses a verbose_json transcription into words with times relative to the
// piece. Words come from, in order of preference: top-level `words[]`
// (OpenAI, speaches); `segments[].words[]` (whisper.cpp server, whose
// "words" are tokens: a token without a leading space continues the word
// before it); the text of each segment spread evenly over its span; the
// top-level text spread over `duration` (or `piece_seconds`). Confidence is
// the word's `probability` when given, else 1.0 (the server vouches for
// words it does not score). Text is kept as the server wrote it (cased and
// punctuated; build_sentences splits punctuation off). Throws
// std::runtime_error when the body is not a JSON object.
Recognition parse_verbose_json(const std::string& body, double piece_seconds);

class OpenAiAsrEngineFactory : public AsrEngineFactory {
 public:
  // Throws std::invalid_argument when options.base_url is not an http(s) URL.
  explicit OpenAiAsrEngineFactory(OpenAiAsrOptions options);

  std::unique_ptr<AsrEngine> make() const override;
  int parallelism() const override { return options_.parallelism; }
  std::vector<std::string> languages() const override { return options_.languages; }

 private:
  OpenAiAsrOptions options_;
  std::string url_;
  std::shared_ptr<const HttpClient> client_;
};

}  // namespace scribe::speech
