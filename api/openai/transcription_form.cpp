#include "api/openai/transcription_form.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "common/crypto.h"
#include "common/error.h"
#include "common/json.h"
#include "common/text.h"
#include "domain/pipelines.h"
#include "domain/upload.h"

namespace scribe::api::openai {
namespace {

// OpenAI's own model names (CreateTranscriptionRequest.model in
// openai/openai-openapi), which clients send by default.
const std::vector<std::string> kAliases = {"whisper-1",
                                           "gpt-4o-transcribe",
                                           "gpt-4o-mini-transcribe",
                                           "gpt-4o-mini-transcribe-2025-12-15",
                                           "gpt-4o-transcribe-diarize",
                                           "gpt-transcribe"};

const std::map<std::string, Format> kFormats = {{"json", Format::Json},
                                                {"text", Format::Text},
                                                {"srt", Format::Srt},
                                                {"vtt", Format::Vtt},
                                                {"verbose_json", Format::VerboseJson},
                                                {"diarized_json", Format::DiarizedJson}};

const std::map<std::string, std::string> kExtensions = {
    {"wav", "audio/wav"},       {"mp3", "audio/mpeg"},     {"mpga", "audio/mpeg"}, {"mpeg", "audio/mpeg"},
    {"m4a", "audio/m4a"},       {"mp4", "audio/mp4"},      {"aac", "audio/aac"},   {"ogg", "audio/ogg"},
    {"oga", "audio/ogg"},       {"opus", "audio/ogg"},     {"webm", "audio/webm"}, {"flac", "audio/flac"},
    {"mov", "video/quicktime"}, {"avi", "video/x-msvideo"}};

std::string extension_of(const std::string& filename) {
  auto slash = filename.find_last_of("/\\");
  std::string base = slash == std::string::npos ? filename : filename.substr(slash + 1);
  auto dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == base.size()) return "";
  return to_lower(base.substr(dot + 1));
}

// A field's text: UTF-8, no control characters (prompts may have line breaks).
std::string checked_text(const std::string& name, const std::string& value, bool multiline) {
  if (!is_valid_utf8(value)) throw Error::invalid(name, name + " is not valid UTF-8");
  for (unsigned char c : value)
    if ((c < 0x20 && !(multiline && (c == '\n' || c == '\r' || c == '\t'))) || c == 0x7f)
      throw Error::invalid(name, name + " has control characters");
  return value;
}

bool parse_bool(const std::string& name, const std::string& value) {
  const std::string v = to_lower(value);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw Error::invalid(name, name + " must be true or false");
}

double parse_temperature(const std::string& value) {
  double t = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, t);
  if (ec != std::errc() || ptr != end || !std::isfinite(t) || t < 0 || t > 1)
    throw Error::invalid("temperature", "temperature must be a number from 0 to 1");
  return t;
}

}  // namespace

const std::vector<std::string>& model_aliases() { return kAliases; }

std::optional<std::string> pipeline_for_model(const std::string& model) {
  for (const auto& a : kAliases)
    if (a == model) return std::string(pipelines::kDefaultPipeline);
  return pipelines::resolve_code(model);
}

const char* format_name(Format f) {
  for (const auto& [name, format] : kFormats)
    if (format == f) return name.c_str();
  return "json";
}

TranscriptionForm parse_form(const std::vector<std::pair<std::string, std::string>>& fields) {
  static const std::set<std::string> kSingle = {"model",           "language", "prompt",
                                                "response_format", "stream",   "temperature"};
  std::map<std::string, std::string> single;
  std::vector<std::string> granularities;
  bool granularities_given = false;
  for (const auto& [raw, value] : fields) {
    std::string name = raw;
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "[]") == 0) name.resize(name.size() - 2);
    if (name == "timestamp_granularities") {
      granularities_given = true;
      granularities.push_back(value);
    } else if (kSingle.count(name)) {
      if (!single.emplace(name, value).second) throw Error::invalid(name, name + " is given more than once");
    }
  }
  TranscriptionForm f;
  auto get = [&](const char* n) -> const std::string* {
    auto it = single.find(n);
    return it == single.end() ? nullptr : &it->second;
  };
  f.model = "whisper-1";
  if (const auto* m = get("model")) {
    if (m->empty() || m->size() > 128) throw Error::invalid("model", "model must be 1-128 characters");
    f.model = checked_text("model", *m, false);
  }
  auto pipeline = pipeline_for_model(f.model);
  if (!pipeline)
    throw Error("unsupported_pipeline",
                "model '" + f.model + "' is unknown; GET /v1/models lists the models this service takes",
                {{"field", "model"}});
  f.pipeline_code = *pipeline;
  if (const auto* l = get("language"); l && !l->empty()) {
    std::string lang = to_lower(checked_text("language", *l, false));
    bool ok = lang.size() <= 16;
    for (char c : lang) ok = ok && (std::isalpha(static_cast<unsigned char>(c)) || c == '-');
    if (!ok) throw Error::invalid("language", "language must be an ISO-639-1 code such as en");
    f.language = lang;
  }
  if (const auto* p = get("prompt")) f.prompt = checked_text("prompt", *p, true);
  if (const auto* r = get("response_format")) {
    auto it = kFormats.find(*r);
    if (it == kFormats.end())
      throw Error::invalid("response_format",
                           "response_format must be one of json, text, srt, vtt, verbose_json, diarized_json");
    f.format = it->second;
  }
  if (const auto* s = get("stream")) f.stream = parse_bool("stream", *s);
  if (const auto* t = get("temperature")) f.temperature = parse_temperature(*t);
  if (granularities_given) {
    f.segments = f.words = false;
    for (const auto& g : granularities) {
      if (g == "segment") f.segments = true;
      else if (g == "word") f.words = true;
      else throw Error::invalid("timestamp_granularities", "timestamp_granularities[] takes word and segment");
    }
  }
  return f;
}

std::string fingerprint(const TranscriptionForm& form, const std::string& filename, int64_t file_bytes,
                        const std::string& file_sha256) {
  // Dumped with sorted keys (nlohmann's object is a std::map): one text per meaning.
  Json j = {{"pipeline", form.pipeline_code},
            {"language", form.language},
            {"filename", filename},
            {"file_bytes", file_bytes},
            {"file_sha256", file_sha256}};
  return "oa1:" + crypto::sha256_hex(j.dump());
}

std::optional<std::string> upload_media_type(const std::string& part_content_type, const std::string& filename) {
  if (!part_content_type.empty() && upload::is_allowed_content_type(part_content_type))
    return upload::media_type(part_content_type);
  auto it = kExtensions.find(extension_of(filename));
  if (it != kExtensions.end()) return it->second;
  return std::nullopt;
}

bool type_left_to_probe(const std::string& part_content_type, const std::string& filename) {
  const std::string type = upload::media_type(part_content_type);
  return (type.empty() || type == "application/octet-stream") && extension_of(filename).empty();
}

}  // namespace scribe::api::openai
