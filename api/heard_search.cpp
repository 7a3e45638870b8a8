#include "api/heard_search.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/ask_retrieval.h"
#include "common/db.h"
#include "domain/limits.h"
#include "enrichment/answering.h"
#include "enrichment/heard_terms.h"
#include "enrichment/text.h"

namespace scribe::api {
namespace {

// $1 account, $3 transcription ids or null, $4 transcription id or null.
#define SCRIBE_HEARD_SCOPE                                                          \
  "where account_id = $1 and ($3::bigint[] is null or transcription_id = any($3)) " \
  "and ($4::bigint is null or transcription_id = $4) "
#define SCRIBE_HEARD_KEY "segment_id, transcription_id, transcription_created_at::text, start_ms"

// Segments holding the query as a substring (the default mode's matches).
const db::Statement kSubstring{"heard.substring",
                               "select " SCRIBE_HEARD_KEY " from search_segments " SCRIBE_HEARD_SCOPE
                               "and text ilike $2 order by transcription_created_at desc, transcription_id desc, "
                               "start_ms, segment_id limit $5"};
// Segments holding any of the lexemes $2 (a tsquery), newest first.
const db::Statement kByLexemes{"heard.by_lexemes",
                               "select " SCRIBE_HEARD_KEY ", terms::text, text from search_segments " SCRIBE_HEARD_SCOPE
                               "and terms @@ $2::tsquery order by transcription_created_at desc, "
                               "transcription_id desc, start_ms, segment_id limit $5"};
// The segment holding each moment ($2 transcription ids, $3 times).
const db::Statement kAt{"heard.segments_at",
                        "select distinct on (s.segment_id) s.segment_id, s.transcription_id, "
                        "s.transcription_created_at::text, s.start_ms, a.i from unnest($2::bigint[], $3::bigint[]) "
                        "with ordinality as a(tid, t, i) cross join lateral (select * from search_segments "
                        "where transcription_id = a.tid and account_id = $1 and start_ms <= a.t "
                        "order by start_ms desc, segment_id desc limit 1) s where s.end_ms >= a.t"};
const db::Statement kHits{"heard.hits",
                          "select p.transcription_id, t.title, p.segment_id, p.speaker, p.start_ms, p.end_ms, p.text, "
                          "t.source, t.url from search_segments p join transcriptions t on t.id = p.transcription_id "
                          "where p.account_id = $1 and p.segment_id = any($2::bigint[])"};

// A segment's place in the spec's order.
struct Key {
  std::string created_at;  // timestamptz text sorts as time within one zone
  int64_t transcription_id = 0;
  int64_t start_ms = 0;
  int64_t segment_id = 0;
  bool operator<(const Key& o) const {
    if (created_at != o.created_at) return created_at > o.created_at;
    if (transcription_id != o.transcription_id) return transcription_id > o.transcription_id;
    if (start_ms != o.start_ms) return start_ms < o.start_ms;
    return segment_id < o.segment_id;
  }
};
Key key_of(const pqxx::row& r) { return {r[2].c_str(), r[1].as<int64_t>(), r[3].as<int64_t>(), r[0].as<int64_t>()}; }

int rank(const std::string& how) { return how == "text" ? 0 : how == "alternate" ? 1 : 2; }

struct Found {
  std::string how;
  std::string heard;
};

}  // namespace

HeardPage run_heard_search(pqxx::transaction_base& txn, const SearchQuery& query) {
  const auto ids = query.transcription_ids ? std::optional<std::string>(db::int_array_literal(*query.transcription_ids))
                                           : std::nullopt;
  std::map<Key, HeardHit> matched;
  for (const auto& r : txn.exec_prepared(kSubstring.name, query.account_id, like_pattern(query.q), ids,
                                         query.transcription_id, kHeardCandidatesMax))
    matched[key_of(r)].how = "text";

  // The query's content words and their lexemes.
  std::vector<std::string> words;
  for (auto& w : enrichment::words(query.q))
    if (!enrichment::is_stop_word(w) && std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
  const auto lexemes = lexemes_of(txn, words);
  AskScope scope{query.account_id, query.transcription_id, query.transcription_ids};
  // Per content word (words PostgreSQL does not index are left out), the
  // segments that have it and how.
  std::vector<std::pair<std::string, std::map<Key, Found>>> per_word;
  for (std::size_t i = 0; i < words.size() && i < lexemes.size(); ++i) {
    if (lexemes[i].empty()) continue;
    std::map<Key, Found> found;
    auto offer = [&](const Key& k, Found f) {
      auto [it, fresh] = found.try_emplace(k, f);
      if (!fresh && rank(f.how) < rank(it->second.how)) it->second = f;
    };
    // As written, and as a sound-alike written.
    std::vector<std::pair<std::string, std::string>> forms = {{lexemes[i], words[i]}};
    std::vector<std::string> sound_words;
    for (const auto& v : enrichment::search_sound_alikes(words[i])) sound_words.push_back(v.word);
    const auto sound_lexemes = lexemes_of(txn, sound_words);
    for (std::size_t j = 0; j < sound_words.size() && j < sound_lexemes.size(); ++j)
      if (!sound_lexemes[j].empty() && sound_lexemes[j] != lexemes[i])
        forms.push_back({sound_lexemes[j], sound_words[j]});
    std::vector<std::string> form_lexemes;
    for (const auto& f : forms) form_lexemes.push_back(f.first);
    for (const auto& r : txn.exec_prepared(kByLexemes.name, query.account_id, any_of(form_lexemes), ids,
                                           query.transcription_id, kHeardCandidatesMax)) {
      int length = 0;
      const auto terms = enrichment::parse_tsvector(r[4].c_str(), &length);
      const auto text_words = enrichment::words(r[5].c_str());
      for (std::size_t f = 0; f < forms.size(); ++f) {
        const bool has =
            std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return t.first == forms[f].first; });
        if (!has) continue;
        // Several forms share a stem ("carl", "carle"): say the one written.
        std::string heard = forms[f].second;
        for (const auto& g : forms)
          if (g.first == forms[f].first &&
              std::find(text_words.begin(), text_words.end(), g.second) != text_words.end())
            heard = g.second;
        offer(key_of(r), {f == 0 ? "text" : "sound_alike", heard});
      }
    }
    // Among what the recognizer almost heard.
    const auto heard = heard_alternates(txn, scope, {lexemes[i]});
    std::vector<int64_t> tids, times;
    for (const auto& h : heard) {
      tids.push_back(h.transcription_id);
      times.push_back((h.start_ms + h.end_ms) / 2);
    }
    if (!heard.empty())
      for (const auto& r :
           txn.exec_prepared(kAt.name, query.account_id, db::int_array_literal(tids), db::int_array_literal(times)))
        offer(key_of(r), {"alternate", heard[r[4].as<std::size_t>() - 1].word});
    per_word.push_back({words[i], std::move(found)});
  }
  // A heard hit has every content word, at least one not as written.
  if (!per_word.empty())
    for (const auto& [k, first] : per_word.front().second) {
      if (matched.count(k)) continue;  // a substring match says "text"
      HeardHit hit{{}, "text", {}};
      for (const auto& [word, found] : per_word) {
        auto it = found.find(k);
        if (it == found.end()) {
          hit.words.clear();
          break;
        }
        hit.words.push_back({word, it->second.how, it->second.heard});
        if (rank(it->second.how) > rank(hit.how)) hit.how = it->second.how;
      }
      if (hit.words.size() == per_word.size() && hit.how != "text") matched[k] = std::move(hit);
    }

  HeardPage page;
  page.total = std::min<int64_t>(static_cast<int64_t>(matched.size()), limits::kSearchTotalCap);
  std::vector<int64_t> wanted;
  std::vector<HeardHit*> slots;
  int index = 0;
  for (auto& [k, hit] : matched) {
    if (index >= query.offset && static_cast<int>(slots.size()) < query.limit) {
      hit.hit.segment_id = k.segment_id;
      wanted.push_back(k.segment_id);
      slots.push_back(&hit);
    }
    ++index;
  }
  page.has_more = static_cast<int64_t>(matched.size()) > static_cast<int64_t>(query.offset) + query.limit;
  if (wanted.empty()) return page;
  std::map<int64_t, pqxx::row> rows;
  const auto result = txn.exec_prepared(kHits.name, query.account_id, db::int_array_literal(wanted));
  for (const auto& r : result) rows.emplace(r[2].as<int64_t>(), r);
  for (auto* slot : slots) {
    auto it = rows.find(slot->hit.segment_id);
    if (it == rows.end()) continue;
    slot->hit = hit_from_row(it->second);
    page.hits.push_back(std::move(*slot));
  }
  return page;
}

Json heard_hit_json(const HeardHit& h, const std::string& public_url) {
  Json j = hit_json(h.hit, public_url);
  Json words = Json::array();
  for (const auto& w : h.words) words.push_back({{"query", w.query}, {"how", w.how}, {"heard", w.heard}});
  j["match"] = {{"how", h.how}, {"words", std::move(words)}};
  return j;
}

}  // namespace scribe::api
