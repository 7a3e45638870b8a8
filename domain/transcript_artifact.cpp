#include "domain/transcript_artifact.h"

#include <cmath>
#include <cstdio>

namespace scribe::transcript {

Json to_json(const TranscriptArtifact& a) {
  Json segs = Json::array();
  for (const auto& s : a.segments) {
    Json words = Json::array();
    for (const auto& w : s.words)
      words.push_back({{"text", w.text},
                       {"start", w.start},
                       {"end", w.end},
                       {"confidence", w.confidence},
                       {"punctuation", w.punctuation ? Json(*w.punctuation) : Json(nullptr)}});
    segs.push_back({{"id", s.id},
                    {"start", s.start},
                    {"end", s.end},
                    {"speaker", s.speaker ? Json(*s.speaker) : Json(nullptr)},
                    {"text", s.text},
                    {"words", std::move(words)}});
  }
  Json out = {{"version", 1},           {"duration_seconds", a.duration_seconds},
              {"language", a.language}, {"engine", a.engine},
              {"speakers", a.speakers}, {"segments", std::move(segs)}};
  // Short keys: an hour of speech has some tens of thousands. Absent when
  // there are none, so artifacts of engines without a lattice (and those
  // made before alternates) are unchanged byte for byte.
  if (!a.alternates.empty()) {
    Json alts = Json::array();
    for (const auto& x : a.alternates)
      alts.push_back({{"w", x.word},
                      {"s", std::round(x.start * 1000) / 1000},
                      {"e", std::round(x.end * 1000) / 1000},
                      {"p", std::round(x.posterior * 1000) / 1000}});
    out["alternates"] = std::move(alts);
  }
  return out;
}

TranscriptArtifact artifact_from_json(const Json& j) {
  TranscriptArtifact a;
  a.duration_seconds = j.at("duration_seconds").get<double>();
  a.language = j.at("language").get<std::string>();
  a.engine = j.value("engine", "");
  a.speakers = j.value("speakers", 0);
  for (const auto& js : j.at("segments")) {
    ArtifactSegment s;
    s.id = js.at("id").get<int64_t>();
    s.start = js.at("start").get<double>();
    s.end = js.at("end").get<double>();
    if (!js.at("speaker").is_null()) s.speaker = js.at("speaker").get<std::string>();
    s.text = js.at("text").get<std::string>();
    for (const auto& jw : js.at("words")) {
      ArtifactWord w;
      w.text = jw.at("text").get<std::string>();
      w.start = jw.at("start").get<double>();
      w.end = jw.at("end").get<double>();
      w.confidence = jw.value("confidence", 0.0);
      if (jw.contains("punctuation") && !jw.at("punctuation").is_null())
        w.punctuation = jw.at("punctuation").get<std::string>();
      s.words.push_back(std::move(w));
    }
    a.segments.push_back(std::move(s));
  }
  if (auto it = j.find("alternates"); it != j.end())
    for (const auto& x : *it)
      a.alternates.push_back(
          {x.at("w").get<std::string>(), x.at("s").get<double>(), x.at("e").get<double>(), x.at("p").get<double>()});
  return a;
}

std::string transcription_prefix(int64_t transcription_id) {
  return "transcripts/" + std::to_string(transcription_id) + "/";
}

std::string artifact_key(int64_t transcription_id, int attempt, const std::string& sha256_hex) {
  return transcription_prefix(transcription_id) + "attempt-" + std::to_string(attempt) + "-" +
         sha256_hex.substr(0, 16) + ".json";
}

std::string speaker_label(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "SPEAKER_%02d", index);
  return buf;
}

}  // namespace scribe::transcript
