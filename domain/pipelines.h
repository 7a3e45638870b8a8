#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"

// The pipeline catalogue: what the engines can really transcribe. A language
// appears only if a configured engine recognizes it.
namespace scribe::pipelines {

struct Language {
  std::string code;
  std::string label;
  std::string native_name;
  // under_5_percent, 5_to_under_15_percent, 15_percent_or_higher, or empty for null.
  std::string error_rate_band;
};

struct Pipeline {
  std::string code;
  std::string name;
  double retail_usd_per_min;
  double retail_usd_per_hour;
  std::vector<Language> languages;
  std::vector<Language> word_timestamp_languages;
  std::vector<std::string> timestamp_options;
  // The recognizer's speed/accuracy profile this pipeline runs with, and
  // what it trades (null for an operator's external server).
  std::string speech_profile;
  std::string speech_profile_description;
};

inline constexpr const char* kDefaultPipeline = "standard";
// The pipeline of an operator-configured OpenAI-compatible server (whisper.cpp
// server, speaches, vLLM), listed only when one is configured.
inline constexpr const char* kExternalPipeline = "openai_compatible";

std::vector<Pipeline> catalogue();
// Lists the external pipeline with these language codes (startup, once the
// operator's engine is configured); an empty list removes it.
void set_external_languages(const std::vector<std::string>& codes);
// The speech profile the standard pipeline runs with (startup, from the
// recognizer's configuration).
void set_standard_profile(const std::string& name, const std::string& description);
// Maps legacy codes to the current pipeline; nullopt for unknown codes.
std::optional<std::string> resolve_code(const std::string& code);
Json to_json(const Pipeline& p);

}  // namespace scribe::pipelines
