#include "domain/enrichment_artifact.h"

#include "domain/transcript_artifact.h"

namespace scribe::enrichment {
namespace {

Json citations_json(const std::vector<Citation>& cs) {
  Json out = Json::array();
  for (const auto& c : cs) out.push_back({{"title", c.title}, {"start", c.start}});
  return out;
}

std::vector<Citation> citations_from(const Json& j) {
  std::vector<Citation> out;
  for (const auto& c : j) out.push_back({c.at("title").get<std::string>(), c.at("start").get<double>()});
  return out;
}

Json chapters_json(const std::vector<Chapter>& cs) {
  Json out = Json::array();
  for (const auto& c : cs)
    out.push_back({{"start", c.start}, {"end", c.end}, {"title", c.title}, {"summary", c.summary}});
  return out;
}

std::vector<Chapter> chapters_from(const Json& j) {
  std::vector<Chapter> out;
  for (const auto& c : j)
    out.push_back({c.at("start").get<double>(), c.at("end").get<double>(), c.at("title").get<std::string>(),
                   c.at("summary").get<std::string>()});
  return out;
}

Json items_json(const std::vector<PostingItem>& items) {
  Json out = Json::array();
  for (const auto& i : items) {
    Json item = {{"start", i.start}, {"title", i.title}};
    if (i.quote) item["quote"] = *i.quote;
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<PostingItem> items_from(const Json& j) {
  std::vector<PostingItem> out;
  for (const auto& i : j) {
    PostingItem item{i.at("start").get<double>(), i.at("title").get<std::string>(), std::nullopt};
    if (i.contains("quote") && !i["quote"].is_null()) item.quote = i["quote"].get<std::string>();
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

Json to_json(const PostingChapters& p) {
  return {{"standard", items_json(p.standard)},
          {"highlights", items_json(p.highlights)},
          {"clips", items_json(p.clips)},
          {"quoted_sections", items_json(p.quoted_sections)},
          {"refine_prompt", p.refine_prompt ? Json(*p.refine_prompt) : Json(nullptr)}};
}

PostingChapters posting_from_json(const Json& j) {
  PostingChapters p;
  p.standard = items_from(j.at("standard"));
  p.highlights = items_from(j.at("highlights"));
  p.clips = items_from(j.at("clips"));
  p.quoted_sections = items_from(j.at("quoted_sections"));
  if (j.contains("refine_prompt") && !j["refine_prompt"].is_null())
    p.refine_prompt = j["refine_prompt"].get<std::string>();
  return p;
}

Json to_json(const EnrichmentArtifact& a) {
  Json sections = Json::array();
  for (const auto& s : a.sections)
    sections.push_back({{"first_segment_id", s.first_segment_id},
                        {"first_segment_index", s.first_segment_index},
                        {"segment_count", s.segment_count},
                        {"start", s.start},
                        {"end", s.end},
                        {"title", s.title},
                        {"summary", s.summary}});
  Json qna = Json::array();
  for (const auto& q : a.qna)
    qna.push_back({{"question", q.question},
                   {"answer", q.answer},
                   {"citations", citations_json(q.citations)},
                   {"answer_citations", citations_json(q.answer_citations)}});
  return {{"version", 1},
          {"method", a.method},
          {"sections", std::move(sections)},
          {"chapters", chapters_json(a.chapters)},
          {"acts", chapters_json(a.acts)},
          {"qna", std::move(qna)},
          {"posting", to_json(a.posting)}};
}

EnrichmentArtifact artifact_from_json(const Json& j) {
  EnrichmentArtifact a;
  a.method = j.value("method", "");
  for (const auto& s : j.at("sections"))
    a.sections.push_back({s.at("first_segment_index").get<int>(), s.at("segment_count").get<int>(),
                          s.at("start").get<double>(), s.at("end").get<double>(), s.at("title").get<std::string>(),
                          s.at("summary").get<std::string>(), s.value("first_segment_id", int64_t{0})});
  a.chapters = chapters_from(j.at("chapters"));
  a.acts = chapters_from(j.at("acts"));
  for (const auto& q : j.at("qna"))
    a.qna.push_back({q.at("question").get<std::string>(), q.at("answer").get<std::string>(),
                     citations_from(q.at("citations")), citations_from(q.at("answer_citations"))});
  a.posting = posting_from_json(j.at("posting"));
  return a;
}

std::string artifact_key(int64_t transcription_id, int attempt, const std::string& sha256_hex) {
  return transcript::transcription_prefix(transcription_id) + "enrichment-attempt-" + std::to_string(attempt) + "-" +
         sha256_hex.substr(0, 16) + ".json";
}

std::string posting_key(int64_t transcription_id, const std::string& sha256_hex) {
  return transcript::transcription_prefix(transcription_id) + "posting-" + sha256_hex.substr(0, 16) + ".json";
}

}  // namespace scribe::enrichment
