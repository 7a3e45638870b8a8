#include "api/enrichment_rows.h"

#include <map>

#include "api/deep_link.h"
#include "common/db.h"

namespace scribe::api {
namespace {

const db::Statement kState{"enrichment_rows.state",
                           "select state, posting::text, coalesce(to_char(generated_at at time zone 'UTC', "
                           "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), coalesce(to_char(posting_generated_at at time "
                           "zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), ''), coalesce(posting_method, ''), "
                           "regen_count from enrichments where transcription_id = $1"};
const db::Statement kChapters{"enrichment_rows.chapters",
                              "select chapter_index, title, summary, start_ms, end_ms from chapters "
                              "where transcription_id = $1 and kind = $2 order by chapter_index limit $3"};
const db::Statement kSections{"enrichment_rows.sections",
                              "select id, section_index, title, summary, start_ms, end_ms, segment_count "
                              "from sections where transcription_id = $1 order by section_index limit $2"};
const db::Statement kQna{"enrichment_rows.qna",
                         "select qna_index, question, answer, citations::text, answer_citations::text from qna "
                         "where transcription_id = $1 and source = 'system' order by qna_index limit $2"};
// Entries saved by POST .../ask (projections/asks_projection.cpp), oldest first.
const db::Statement kAsked{"enrichment_rows.asked",
                           "select id, question, answer, citations::text, "
                           "to_char(asked_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') from asks "
                           "where transcription_id = $1 order by asked_at, id limit $2"};
const db::Statement kSegments{"enrichment_rows.segments",
                              "select id, start_ms, end_ms, speaker, text from segments "
                              "where transcription_id = $1 order by segment_index"};

// Ids of chapters and acts: the table's key is (transcription, kind, index);
// the wire id is derived from it so it is the same after a rebuild. At most
// 30 chapters and 15 acts, so the two ranges never meet.
int64_t chapter_id(int64_t transcription_id, const std::string& kind, int index) {
  return transcription_id * 100 + (kind == "act" ? 50 : 0) + index;
}

Json citations_with_links(const Json& stored, const LinkSource& link) {
  Json out = Json::array();
  for (const auto& c : stored) {
    const int64_t start_ms = c.at("start_ms").get<int64_t>();
    out.push_back({{"title", c.at("title")}, {"start_seconds", start_ms / 1000.0}, {"url", link.at(start_ms)}});
  }
  return out;
}

int64_t ms(double seconds) { return static_cast<int64_t>(seconds * 1000.0 + 0.5); }

}  // namespace

std::string LinkSource::at(int64_t start_ms) const {
  return deep_link(public_url, transcription_id, source, url, start_ms);
}

std::string LinkSource::at_seconds(double start) const { return at(ms(start)); }

LinkSource LinkSource::of(const Json& transcription, const std::string& public_url) {
  LinkSource link{public_url, transcription.at("id").get<int64_t>(), transcription.value("source", ""), std::nullopt};
  if (transcription.contains("url") && transcription["url"].is_string())
    link.url = transcription["url"].get<std::string>();
  return link;
}

EnrichmentState load_enrichment_state(pqxx::transaction_base& txn, int64_t transcription_id) {
  EnrichmentState e;
  auto r = txn.exec_prepared(kState.name, transcription_id);
  if (r.empty()) return e;
  e.present = true;
  e.state = r[0][0].c_str();
  if (!r[0][1].is_null()) e.posting = Json::parse(r[0][1].c_str());
  e.generated_at = r[0][2].c_str();
  e.posting_generated_at = r[0][3].c_str();
  e.posting_method = r[0][4].c_str();
  e.regen_count = r[0][5].as<int>();
  return e;
}

Json chapters_json(pqxx::transaction_base& txn, const LinkSource& link, const char* kind, int limit) {
  Json out = Json::array();
  for (const auto& r : txn.exec_prepared(kChapters.name, link.transcription_id, kind, limit)) {
    const int index = r[0].as<int>();
    const int64_t start_ms = r[3].as<int64_t>(), end_ms = r[4].as<int64_t>();
    out.push_back({{"id", chapter_id(link.transcription_id, kind, index)},
                   {"chapter_index", index},
                   {"title", r[1].c_str()},
                   {"summary", r[2].c_str()},
                   {"start_seconds", start_ms / 1000.0},
                   {"end_seconds", end_ms / 1000.0},
                   {"url", link.at(start_ms)}});
  }
  return out;
}

Json sections_json(pqxx::transaction_base& txn, const LinkSource& link, int limit) {
  Json out = Json::array();
  for (const auto& r : txn.exec_prepared(kSections.name, link.transcription_id, limit)) {
    const int64_t start_ms = r[4].as<int64_t>(), end_ms = r[5].as<int64_t>();
    out.push_back({{"id", r[0].as<int64_t>()},
                   {"section_index", r[1].as<int>()},
                   {"title", r[2].c_str()},
                   {"summary", r[3].c_str()},
                   {"start_seconds", start_ms / 1000.0},
                   {"end_seconds", end_ms / 1000.0},
                   {"segment_count", r[6].as<int>()},
                   {"url", link.at(start_ms)}});
  }
  return out;
}

Json qna_json(pqxx::transaction_base& txn, const LinkSource& link, const std::string& qna_source, int limit) {
  Json out = Json::array();
  for (const auto& r : txn.exec_prepared(kQna.name, link.transcription_id, limit)) {
    const int index = r[0].as<int>();
    // Stable across rebuilds, like chapter ids; asked entries' ids are far above.
    out.push_back({{"id", link.transcription_id * 100 + index},
                   {"source", "system"},
                   {"question", r[1].c_str()},
                   {"answer", r[2].c_str()},
                   {"citations", citations_with_links(Json::parse(r[3].c_str()), link)},
                   {"answer_citations", citations_with_links(Json::parse(r[4].c_str()), link)}});
  }
  if (qna_source != "all" || static_cast<int>(out.size()) >= limit) return out;
  for (const auto& r : txn.exec_prepared(kAsked.name, link.transcription_id, limit - static_cast<int>(out.size()))) {
    const Json cited = citations_with_links(Json::parse(r[3].c_str()), link);
    out.push_back({{"id", r[0].as<int64_t>()},
                   {"source", "user"},
                   {"question", r[1].c_str()},
                   {"answer", r[2].c_str()},
                   {"citations", cited},
                   {"answer_citations", cited},
                   {"asked_at", r[4].c_str()}});
  }
  return out;
}

Json posting_chapters_json(const EnrichmentState& e, const LinkSource& link) {
  Json out = Json::object();
  if (!e.posting) return out;
  const auto cache = enrichment::posting_from_json(*e.posting);
  auto variant = [&](const std::vector<enrichment::PostingItem>& items, bool quoted) {
    Json list = Json::array();
    for (const auto& i : items) {
      const int64_t start_ms = ms(i.start);  // the wire's start_ms, and the link's moment
      Json item = {{"start_ms", start_ms}};
      item[quoted ? "insight_title" : "title"] = i.title;
      if (quoted) item["quote"] = i.quote.value_or("");
      item["url"] = link.at(start_ms);
      list.push_back(std::move(item));
    }
    return Json{
        {"balanced", {{"items", std::move(list)}, {"generated_at", e.posting_generated_at}, {"style", "balanced"}}}};
  };
  out["standard"] = variant(cache.standard, false);
  out["highlights"] = variant(cache.highlights, false);
  out["clips"] = variant(cache.clips, false);
  out["quoted_sections"] = variant(cache.quoted_sections, true);
  return out;
}

std::vector<TimedRow> load_chapter_rows(pqxx::transaction_base& txn, int64_t transcription_id, const char* kind) {
  std::vector<TimedRow> out;
  for (const auto& r : txn.exec_prepared(kChapters.name, transcription_id, kind, 1000))
    out.push_back({r[3].as<int64_t>() / 1000.0, r[1].c_str(), r[2].c_str()});
  return out;
}

std::vector<TimedRow> load_section_rows(pqxx::transaction_base& txn, int64_t transcription_id) {
  std::vector<TimedRow> out;
  for (const auto& r : txn.exec_prepared(kSections.name, transcription_id, 1'000'000))
    out.push_back({r[4].as<int64_t>() / 1000.0, r[2].c_str(), r[3].c_str()});
  return out;
}

transcript::TranscriptArtifact load_transcript(pqxx::transaction_base& txn, int64_t transcription_id) {
  transcript::TranscriptArtifact t;
  for (const auto& r : txn.exec_prepared(kSegments.name, transcription_id)) {
    transcript::ArtifactSegment s;
    s.id = r[0].as<int64_t>();
    s.start = r[1].as<int64_t>() / 1000.0;
    s.end = r[2].as<int64_t>() / 1000.0;
    if (!r[3].is_null()) s.speaker = r[3].c_str();
    s.text = r[4].c_str();
    t.duration_seconds = std::max(t.duration_seconds, s.end);
    t.segments.push_back(std::move(s));
  }
  return t;
}

std::vector<enrichment::Section> load_sections(pqxx::transaction_base& txn, int64_t transcription_id,
                                               const transcript::TranscriptArtifact& t) {
  std::map<int64_t, int> index_of;
  for (size_t i = 0; i < t.segments.size(); ++i) index_of[t.segments[i].id] = static_cast<int>(i);
  std::vector<enrichment::Section> out;
  for (const auto& r : txn.exec_prepared(kSections.name, transcription_id, 1'000'000)) {
    auto it = index_of.find(r[0].as<int64_t>());
    if (it == index_of.end()) return {};  // not the transcript's sections: recompute them
    enrichment::Section s;
    s.first_segment_id = it->first;
    s.first_segment_index = it->second;
    s.segment_count = r[6].as<int>();
    s.start = r[4].as<int64_t>() / 1000.0;
    s.end = r[5].as<int64_t>() / 1000.0;
    s.title = r[2].c_str();
    s.summary = r[3].c_str();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace scribe::api
