#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "enrichment/answering.h"
#include "enrichment/heard_terms.h"

// The database half of an ask: the question's lexemes, the segments of the
// scope that hold any of them (from search_segments' `terms`, through the
// (account_id, terms) GIN index for the library), and the collection counts
// BM25 needs (search_stats). enrichment/answering.h does the rest.
namespace scribe::api {

struct AskScope {
  int64_t account_id = 0;
  std::optional<int64_t> transcription_id;                // one transcription (POST .../{id}/ask)
  std::optional<std::vector<int64_t>> transcription_ids;  // the library ask's filter; others' ids match nothing
};

struct Retrieved {
  std::vector<enrichment::QueryTerm> terms;
  std::vector<enrichment::AskSegment> segments;
  enrichment::Collection collection;
};

// A library ask fetches every segment holding a term found in at most this
// many of the account's segments; commoner terms are still scored in what
// was fetched (their frequencies are counted apart), and when every term is
// commoner, the rarest one fetches at most this many segments.
inline constexpr int kLibraryFetchMaxSegments = 20000;
// A scope of chosen transcriptions up to this many segments is read whole and
// matched in process, as one transcription always is (ask_retrieval.cpp).
inline constexpr double kReadWholeMaxSegments = 50000;
// A library ask over at least this many segments takes the frequencies of
// common lexemes from the planner's statistics instead of counting them
// (ask_retrieval.cpp, retrieve).
inline constexpr double kEstimateFromSegments = 100000;

// Where retrieval changes its way of finding segments and frequencies (the
// service always uses the defaults; the database tests lower them).
struct RetrievalBounds {
  double read_whole_max_segments = kReadWholeMaxSegments;
  double estimate_from_segments = kEstimateFromSegments;
};

// With `matching`, each term also brings the words that sound or mean alike
// (enrichment/heard_terms.h), and segments get what the recognizer almost
// heard in them (transcript_alternates) of the terms.
Retrieved retrieve(pqxx::transaction_base& txn, const AskScope& scope, const std::string& question,
                   const enrichment::HeardMatching& matching = {}, const RetrievalBounds& bounds = {});

// Each word's English lexeme as the segments' `terms` hold them (empty for a
// stop word), in the words' order.
std::vector<std::string> lexemes_of(pqxx::transaction_base& txn, const std::vector<std::string>& words);

// What the recognizer almost heard of `lexemes` in the scope: alternates at
// most kAlternatesMax of them, most probable first.
struct HeardAlternate {
  int64_t transcription_id = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string word;
  std::string lexeme;
  double posterior = 0;
};
inline constexpr int kAlternatesMax = 5000;
std::vector<HeardAlternate> heard_alternates(pqxx::transaction_base& txn, const AskScope& scope,
                                             const std::vector<std::string>& lexemes);

// The tsquery text matching any of `lexemes` as they are ('bee' | 'hive'):
// quoted, so no operator or stemming applies to them again. (The statements'
// parameter; bench/ask_speed_benchmark.cpp runs them one by one.)
std::string any_of(const std::vector<std::string>& lexemes);

// The segment after `s` in its recording (enrichment::NextSegment).
std::optional<enrichment::AskSegment> next_segment(pqxx::transaction_base& txn, const enrichment::AskSegment& s);

// The section of `transcription_id` that holds the moment (the last one
// starting at or before it); nullopt when the transcription has none.
struct CitedSection {
  int64_t id = 0;
  std::string title;
};
std::optional<CitedSection> section_at(pqxx::transaction_base& txn, int64_t transcription_id, int64_t start_ms);

}  // namespace scribe::api
