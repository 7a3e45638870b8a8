#include "speech/openai_asr_engine.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "common/json.h"
#include "common/text.h"
#include "common/url_policy.h"

namespace scribe::speech {
namespace {

// HttpClient::post keeps at most this much of a response body. A 20 s piece
// (the longest VAD cuts, plus padding) comes back as about 5-10 KiB of
// verbose_json, so a body of this size means the answer was cut off.
constexpr size_t kPostBodyCap = 64 * 1024;

void put_le(std::string& out, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// One word or token as the server listed it.
struct Piece {
  std::string text;
  double start = 0;
  double end = 0;
  std::optional<double> probability;
};

bool is_punctuation_only(const std::string& s) {
  if (s.empty()) return false;
  return s.find_first_not_of(".,?!;:\"'-") == std::string::npos || s == "\xE2\x80\xA6";
}

// Whisper's control tokens ("[_BEG_]", "<|en|>") when a server lets them through.
bool is_control_token(const std::string& s) {
  return (s.size() >= 4 && s.front() == '[' && s[1] == '_' && s.back() == ']') ||
         (s.size() >= 4 && s.rfind("<|", 0) == 0 && s.compare(s.size() - 2, 2, "|>") == 0);
}

// Appends the words a list of pieces spells. When the list follows the
// leading-space convention (whisper.cpp tokens, faster-whisper words), a
// piece without a leading space continues the word before it ("trans" +
// "cription"); otherwise (OpenAI) every piece is a word. Punctuation-only
// pieces attach to the word before them.
void append_words(const std::vector<Piece>& pieces, std::vector<RecognizedWord>& out) {
  bool leading_space = false;
  for (size_t i = 1; i < pieces.size(); ++i) leading_space = leading_space || pieces[i].text.rfind(' ', 0) == 0;
  bool have_word = false;  // a word of this list to continue
  for (const auto& p : pieces) {
    const std::string text(trim(p.text));
    if (text.empty() || is_control_token(text)) continue;
    double start = std::max(0.0, p.start);
    double end = std::max(start, p.end);
    double confidence = p.probability ? std::clamp(*p.probability, 0.0, 1.0) : 1.0;
    bool continues = have_word && (is_punctuation_only(text) || (leading_space && p.text.front() != ' '));
    if (continues) {
      RecognizedWord& w = out.back();
      w.text += text;
      if (!is_punctuation_only(text)) {
        w.end = std::max(w.end, end);
        w.confidence = std::min(w.confidence, confidence);
      }
      continue;
    }
    if (is_punctuation_only(text)) continue;  // nothing to attach it to
    out.push_back({text, start, end, confidence});
    have_word = true;
  }
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '\'' || (c & 0x80); }

// Where `word` occurs in `text` at or after `from` not as part of a longer word.
size_t find_whole_word(const std::string& text, const std::string& word, size_t from) {
  for (size_t at = text.find(word, from); at != std::string::npos; at = text.find(word, at + 1)) {
    bool starts = at == 0 || !is_word_char(text[at - 1]);
    bool ends = at + word.size() == text.size() || !is_word_char(text[at + word.size()]);
    if (starts && ends) return at;
  }
  return std::string::npos;
}

// OpenAI's `words[]` carry no punctuation although its `text` does ("Hello,
// world." against "Hello", "world"). When no word has any, each word is
// found in the text in order and the punctuation right after it is copied
// onto it; a word not found as such is left alone.
void restore_punctuation(const std::string& text, std::vector<RecognizedWord>& words) {
  for (const auto& w : words) {
    if (!w.text.empty() && std::string_view(".,?!;:").find(w.text.back()) != std::string_view::npos) return;
  }
  size_t pos = 0;
  for (auto& w : words) {
    size_t at = find_whole_word(text, w.text, pos);
    if (at == std::string::npos) continue;
    pos = at + w.text.size();
    size_t end = text.find_first_not_of(".,?!;:", pos);
    if (end == std::string::npos) end = text.size();
    w.text += text.substr(pos, end - pos);
    pos = end;
  }
}

// Spreads the words of `text` evenly over [start, end].
void append_even(const std::string& text, double start, double end, std::vector<RecognizedWord>& out) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  start = std::max(0.0, start);
  end = std::max(start, end);
  const double step = words.empty() ? 0 : (end - start) / double(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    out.push_back({words[i], start + step * double(i), start + step * double(i + 1), 1.0});
  }
}

// A numeric member, or nullopt when absent, null or not a number.
std::optional<double> number(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::vector<Piece> pieces_of(const Json& list) {
  std::vector<Piece> out;
  for (const auto& item : list) {
    if (!item.is_object() || !item.contains("word") || !item["word"].is_string()) continue;
    Piece p;
    p.text = item["word"].get<std::string>();
    p.start = number(item, "start").value_or(0.0);
    p.end = number(item, "end").value_or(p.start);
    p.probability = number(item, "probability");
    out.push_back(std::move(p));
  }
  return out;
}

// A short, single-line excerpt of an error body for an exception message.
std::string excerpt(const std::string& body) {
  std::string out = body.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return body.size() > out.size() ? out + "…" : out;
}

class OpenAiAsrEngine : public AsrEngine {
 public:
  OpenAiAsrEngine(const OpenAiAsrOptions& options, std::string url, std::shared_ptr<const HttpClient> client)
      : options_(options), url_(std::move(url)), client_(std::move(client)) {}

  Recognition recognize(const int16_t* pcm, size_t count, const std::string& language,
                        const VoiceAdaptation&) override {
    if (count == 0) return {};  // servers reject empty files; there is nothing to hear
    std::vector<MultipartField> fields{
        {"file", encode_wav(pcm, count), "piece.wav", "audio/wav"},
        {"model", options_.model, std::nullopt, std::nullopt},
        {"response_format", "verbose_json", std::nullopt, std::nullopt},
        {"timestamp_granularities[]", "word", std::nullopt, std::nullopt},
        {"timestamp_granularities[]", "segment", std::nullopt, std::nullopt},
    };
    if (!language.empty() && language != "auto") fields.push_back({"language", language, std::nullopt, std::nullopt});
    std::string boundary;
    std::string body;
    // A 128-bit random boundary inside the audio is practically impossible,
    // but checked for anyway; a few draws settle it.
    for (int attempt = 0; body.empty(); ++attempt) {
      boundary = random_multipart_boundary();
      try {
        body = build_multipart_body(fields, boundary);
      } catch (const std::invalid_argument&) {
        if (attempt >= 3) throw std::runtime_error("could not find a multipart boundary for the audio");
      }
    }
    std::vector<std::pair<std::string, std::string>> headers{
        {"Content-Type", "multipart/form-data; boundary=" + boundary}, {"Accept", "application/json"}};
    if (options_.api_key) headers.emplace_back("Authorization", "Bearer " + *options_.api_key);

    HttpResponse response;
    try {
      response = client_->post(url_, headers, body, options_.timeout);
    } catch (const HttpError& e) {
      throw std::runtime_error(std::string("transcription request failed: ") + e.what());
    }
    if (response.status < 200 || response.status >= 300) {
      throw std::runtime_error("transcription server answered " + std::to_string(response.status) + ": " +
                               excerpt(response.body));
    }
    if (response.body.size() >= kPostBodyCap) {
      throw std::runtime_error("transcription response exceeds 64 KiB (piece of " + std::to_string(count) +
                               " samples)");
    }
    return parse_verbose_json(response.body, double(count) / kSampleRate);
  }

 private:
  OpenAiAsrOptions options_;
  std::string url_;
  std::shared_ptr<const HttpClient> client_;
};

}  // namespace

std::vector<std::string> parse_asr_languages(const std::string& list) {
  std::vector<std::string> out = split_list(list, EmptyItems::kDrop);
  for (auto& item : out) item = to_lower(item);
  return out;
}

std::string openai_transcriptions_url(const std::string& base_url) {
  std::string url(trim(base_url));
  while (!url.empty() && url.back() == '/') url.pop_back();
  auto ends_with = [&](std::string_view suffix) {
    return url.size() >= suffix.size() && url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("/audio/transcriptions")) return url;
  if (ends_with("/v1")) return url + "/audio/transcriptions";
  return url + "/v1/audio/transcriptions";
}

std::string encode_wav(const int16_t* pcm, size_t count, int sample_rate) {
  const uint32_t data_bytes = static_cast<uint32_t>(count * 2);
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  put_le(out, 36 + data_bytes, 4);
  out += "WAVEfmt ";
  put_le(out, 16, 4);                                      // fmt chunk size
  put_le(out, 1, 2);                                       // PCM
  put_le(out, 1, 2);                                       // mono
  put_le(out, static_cast<uint32_t>(sample_rate), 4);      // samples per second
  put_le(out, static_cast<uint32_t>(sample_rate) * 2, 4);  // bytes per second
  put_le(out, 2, 2);                                       // block align
  put_le(out, 16, 2);                                      // bits per sample
  out += "data";
  put_le(out, data_bytes, 4);
  for (size_t i = 0; i < count; ++i) put_le(out, static_cast<uint16_t>(pcm[i]), 2);
  return out;
}

std::string random_multipart_boundary() {
  thread_local std::random_device device;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "scribe-";
  for (int i = 0; i < 4; ++i) {
    uint32_t r = device();
    for (int j = 0; j < 8; ++j) out.push_back(kHex[(r >> (4 * j)) & 0xF]);
  }
  return out;
}

std::string build_multipart_body(const std::vector<MultipartField>& fields, const std::string& boundary) {
  const std::string delimiter = "--" + boundary;
  std::string body;
  for (const auto& f : fields) {
    if (f.value.find(delimiter) != std::string::npos) {
      throw std::invalid_argument("multipart field " + f.name + " contains the boundary");
    }
    body += delimiter + "\r\nContent-Disposition: form-data; name=\"" + f.name + "\"";
    if (f.filename) body += "; filename=\"" + *f.filename + "\"";
    body += "\r\n";
    if (f.content_type) body += "Content-Type: " + *f.content_type + "\r\n";
    body += "\r\n";
    body += f.value;
    body += "\r\n";
  }
  body += delimiter + "--\r\n";
  return body;
}

std::optional<std::string> openai_language_code(const std::string& name_or_code) {
  // Whisper's language names (whisper/tokenizer.py LANGUAGES) for the
  // languages most often met; other names are reported as unknown.
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"english", "en"},    {"german", "de"},     {"french", "fr"},     {"spanish", "es"},   {"castilian", "es"},
      {"italian", "it"},    {"portuguese", "pt"}, {"dutch", "nl"},      {"flemish", "nl"},   {"japanese", "ja"},
      {"chinese", "zh"},    {"mandarin", "zh"},   {"russian", "ru"},    {"korean", "ko"},    {"arabic", "ar"},
      {"hindi", "hi"},      {"turkish", "tr"},    {"polish", "pl"},     {"ukrainian", "uk"}, {"swedish", "sv"},
      {"danish", "da"},     {"norwegian", "no"},  {"finnish", "fi"},    {"czech", "cs"},     {"slovak", "sk"},
      {"hungarian", "hu"},  {"romanian", "ro"},   {"moldavian", "ro"},  {"greek", "el"},     {"hebrew", "he"},
      {"indonesian", "id"}, {"malay", "ms"},      {"vietnamese", "vi"}, {"thai", "th"},      {"persian", "fa"},
      {"urdu", "ur"},       {"bengali", "bn"},    {"tamil", "ta"},      {"catalan", "ca"},   {"valencian", "ca"},
      {"croatian", "hr"},   {"serbian", "sr"},    {"bulgarian", "bg"},  {"slovenian", "sl"}, {"lithuanian", "lt"},
      {"latvian", "lv"},    {"estonian", "et"},   {"icelandic", "is"},  {"welsh", "cy"},     {"irish", "ga"},
      {"tagalog", "tl"},    {"swahili", "sw"},    {"afrikaans", "af"},  {"galician", "gl"},  {"basque", "eu"},
      {"cantonese", "yue"},
  };
  std::string s = to_lower(trim(name_or_code));
  for (const auto& [name, code] : kNames) {
    if (s == name) return std::string(code);
  }
  // A code as such ("en", "yue"), or a locale ("en-US", "pt_BR") cut to it.
  auto sep = s.find_first_of("-_");
  std::string code = s.substr(0, sep);
  bool letters = !code.empty() && std::all_of(code.begin(), code.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (letters && (code.size() == 2 || code.size() == 3)) return code;
  return std::nullopt;
}

Recognition parse_verbose_json(const std::string& body, double piece_seconds) {
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::runtime_error("transcription response is not a JSON object: " + excerpt(body));
  Recognition r;
  if (j.contains("language") && j["language"].is_string()) r.language = openai_language_code(j["language"]);

  if (j.contains("words") && j["words"].is_array() && !j["words"].empty()) {
    append_words(pieces_of(j["words"]), r.words);
    if (j.contains("text") && j["text"].is_string()) restore_punctuation(j["text"].get<std::string>(), r.words);
    return r;
  }
  const bool have_segments = j.contains("segments") && j["segments"].is_array() && !j["segments"].empty();
  if (have_segments) {
    bool segment_words = false;
    for (const auto& seg : j["segments"]) {
      segment_words = segment_words ||
                      (seg.is_object() && seg.contains("words") && seg["words"].is_array() && !seg["words"].empty());
    }
    for (const auto& seg : j["segments"]) {
      if (!seg.is_object()) continue;
      if (segment_words) {
        if (seg.contains("words") && seg["words"].is_array()) append_words(pieces_of(seg["words"]), r.words);
      } else if (seg.contains("text") && seg["text"].is_string()) {
        double start = number(seg, "start").value_or(0.0);
        append_even(seg["text"].get<std::string>(), start, number(seg, "end").value_or(start), r.words);
      }
    }
    return r;
  }
  if (j.contains("text") && j["text"].is_string()) {
    double duration = number(j, "duration").value_or(piece_seconds);
    append_even(j["text"].get<std::string>(), 0, duration > 0 ? duration : piece_seconds, r.words);
  }
  return r;
}

OpenAiAsrEngineFactory::OpenAiAsrEngineFactory(OpenAiAsrOptions options)
    : options_(std::move(options)), url_(openai_transcriptions_url(options_.base_url)) {
  if (!parse_http_url(url_)) throw std::invalid_argument("transcription server URL is not an http(s) URL: " + url_);
  options_.parallelism = std::max(1, options_.parallelism);
  // The operator configures this server, and it usually sits on a private
  // network or on loopback next to a GPU. This client only ever talks to that
  // one configured URL, so private addresses are allowed for it alone; the
  // user-facing clients keep the strict policy. Link-local (cloud metadata)
  // and reserved addresses stay refused even so.
  UrlPolicy policy;
  policy.allow_private = true;
  client_ = std::make_shared<const HttpClient>(policy);
}

std::unique_ptr<AsrEngine> OpenAiAsrEngineFactory::make() const {
  return std::make_unique<OpenAiAsrEngine>(options_, url_, client_);
}

}  // namespace scribe::speech
