#include "domain/pipelines.h"

namespace scribe::pipelines {

std::vector<Pipeline> catalogue() {
  // PocketSphinx with the US English model is the only embedded recognizer.
  // Its word error rate on read speech is well above 15%, so the band is the
  // honest one; a measured figure is in bench/ and the closing notes.
  Language en{"en", "English", "English", "15_percent_or_higher"};
  return {Pipeline{"standard",
                   "Standard (PocketSphinx, US English)",
                   0.0167,
                   1.0,
                   {en},
                   {en},
                   {"sentence", "word"}}};
}

std::optional<std::string> resolve_code(const std::string& code) {
  // Codes used by earlier versions of the API all map to the one pipeline.
  static const char* legacy[] = {"standard", "default", "standard_v1", "standard_v2", "fast", "basic"};
  for (const char* l : legacy)
    if (code == l) return std::string(kDefaultPipeline);
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
          {"timestamp_options", p.timestamp_options}};
}

}  // namespace scribe::pipelines
