#include "domain/pipelines.h"

#include "domain/pricing.h"

#include <map>

#include <mutex>

namespace scribe::pipelines {
namespace {

std::mutex external_mu;
std::vector<std::string> external_codes;
std::string standard_profile = "balanced";
std::string standard_profile_description;

// Labels for the codes an external engine may list; others show the code.
const std::map<std::string, std::pair<std::string, std::string>>& language_names() {
  static const std::map<std::string, std::pair<std::string, std::string>> names = {
      {"en", {"English", "English"}},  {"de", {"German", "Deutsch"}},       {"fr", {"French", "Français"}},
      {"es", {"Spanish", "Español"}},  {"it", {"Italian", "Italiano"}},     {"pt", {"Portuguese", "Português"}},
      {"nl", {"Dutch", "Nederlands"}}, {"ja", {"Japanese", "日本語"}},      {"zh", {"Chinese", "中文"}},
      {"ru", {"Russian", "Русский"}},  {"pl", {"Polish", "Polski"}},        {"sv", {"Swedish", "Svenska"}},
      {"tr", {"Turkish", "Türkçe"}},   {"uk", {"Ukrainian", "Українська"}}, {"ko", {"Korean", "한국어"}},
      {"ar", {"Arabic", "العربية"}},   {"hi", {"Hindi", "हिन्दी"}},
  };
  return names;
}

}  // namespace

void set_external_languages(const std::vector<std::string>& codes) {
  std::lock_guard lock(external_mu);
  external_codes = codes;
}

void set_standard_profile(const std::string& name, const std::string& description) {
  std::lock_guard lock(external_mu);
  standard_profile = name;
  standard_profile_description = description;
}

std::vector<Pipeline> catalogue() {
  std::lock_guard lock(external_mu);
  // PocketSphinx with the US English model is the only embedded recognizer.
  // Its word error rate on read speech is well above 15%, so the band is the
  // honest one; a measured figure is in bench/ and the closing notes.
  Language en{"en", "English", "English", "15_percent_or_higher"};
  std::vector<Pipeline> list = {Pipeline{"standard",
                                         "Standard (PocketSphinx, US English)",
                                         pricing::kDisplayUsdPerMinute,
                                         pricing::kDisplayUsdPerHour,
                                         {en},
                                         {en},
                                         {"sentence", "word"},
                                         standard_profile,
                                         standard_profile_description}};
  if (!external_codes.empty()) {
    // No benchmark of the operator's model exists here, so no band is claimed.
    std::vector<Language> langs;
    for (const auto& code : external_codes) {
      auto it = language_names().find(code);
      langs.push_back(it == language_names().end() ? Language{code, code, code, ""}
                                                   : Language{code, it->second.first, it->second.second, ""});
    }
    list.push_back(Pipeline{kExternalPipeline,
                            "OpenAI-compatible speech server (operator-configured)",
                            pricing::kDisplayUsdPerMinute,
                            pricing::kDisplayUsdPerHour,
                            langs,
                            langs,
                            {"sentence", "word"},
                            "",
                            ""});
  }
  return list;
}

std::optional<std::string> resolve_code(const std::string& code) {
  // Codes used by earlier versions of the API all map to the one pipeline.
  static const char* legacy[] = {"standard", "default", "standard_v1", "standard_v2", "fast", "basic"};
  for (const char* l : legacy)
    if (code == l) return std::string(kDefaultPipeline);
  if (code == kExternalPipeline) {
    std::lock_guard lock(external_mu);
    if (!external_codes.empty()) return code;
  }
  return std::nullopt;
}

Json to_json(const Pipeline& p) {
  auto lang = [](const Language& l) {
    return Json{{"code", l.code},
                {"label", l.label},
                {"native_name", l.native_name},
                {"fleurs_wer", nullptr},
                {"benchmark_error_rate_band", l.error_rate_band.empty() ? Json(nullptr) : Json(l.error_rate_band)}};
  };
  Json langs = Json::array(), words = Json::array();
  for (const auto& l : p.languages) langs.push_back(lang(l));
  for (const auto& l : p.word_timestamp_languages) words.push_back(lang(l));
  return {{"code", p.code},
          {"name", p.name},
          {"retail_usd_per_min", p.retail_usd_per_min},
          {"retail_usd_per_hour", p.retail_usd_per_hour},
          {"supported_languages", langs},
          {"word_timestamp_languages", words},
          {"timestamp_options", p.timestamp_options},
          {"speech_profile", p.speech_profile.empty() ? Json(nullptr) : Json(p.speech_profile)},
          {"speech_profile_description",
           p.speech_profile_description.empty() ? Json(nullptr) : Json(p.speech_profile_description)}};
}

}  // namespace scribe::pipelines
