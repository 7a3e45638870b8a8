#pragma once
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "api/search_query.h"

// The opt-in "heard" mode of GET /api/v1/search and .../{id}/search
// (`match=heard`): besides the spec's substring matches, the segments where
// the recognizer probably heard the query: each of its content words is in
// the segment as written, among the words the recognizer almost heard there
// (transcript_alternates), or as a close sound-alike of it in the text
// (enrichment/heard_terms.h), and at least one of them is not as written.
// Each hit says how it matched. docs/heard_matching.md has the rules.
namespace scribe::api {

struct HeardWord {
  std::string query;  // the query's word
  std::string how;    // "text", "alternate" or "sound_alike"
  std::string heard;  // what the transcript has there (the word written, or the sound-alike)
};

struct HeardHit {
  SearchHit hit;
  std::string how;  // the weakest of its words' ("text" for a substring match)
  std::vector<HeardWord> words;
};

struct HeardPage {
  std::vector<HeardHit> hits;
  int64_t total = 0;  // exact up to limits::kSearchTotalCap
  bool has_more = false;
};

// At most this many candidate segments per way of matching a word are read;
// a heard search over a word in most of a library sees the newest ones.
inline constexpr int kHeardCandidatesMax = 2000;

HeardPage run_heard_search(pqxx::transaction_base& txn, const SearchQuery& query);

Json heard_hit_json(const HeardHit& hit, const std::string& public_url);

}  // namespace scribe::api
