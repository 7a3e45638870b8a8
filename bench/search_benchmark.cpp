// Search latency: loads N segments of English-like text over T transcriptions
// of one account straight into `search_segments` (and the T rows into
// `transcriptions`) of a fresh database, ANALYZEs, then times
// scribe::api::run_search, the count and page statements the server runs for
// GET /api/v1/search, for common substrings, a phrase, a medium-rare word, a
// rare word (planted in 10 segments), two-character queries, and deep pages.
// Target: p95 < 50 ms.
//
//   SCRIBE_BENCH_DATABASE_URL         a database on the cluster; the benchmark creates (after
//                                     dropping it) its own database next to it      required
//   SCRIBE_BENCH_SEARCH_DB            name of that database        default scribe_bench_search
//   SCRIBE_BENCH_SEARCH_SEGMENTS      segments to load             default 1000000
//   SCRIBE_BENCH_SEARCH_TRANSCRIPTIONS transcriptions               default 2000
//   SCRIBE_BENCH_SEARCH_RUNS          timed runs per query         default 40
//   SCRIBE_BENCH_SEARCH_REUSE         1: keep an already loaded database   default 0
//   SCRIBE_BENCH_SEARCH_EXPLAIN       1: print EXPLAIN ANALYZE of each query  default 0
//
// The text is generated in code (no network): a few hundred frequent English
// words and 20,000 made-up words of two to four syllables, drawn with Zipf-like
// frequencies, 6-24 words a sentence. Indexes are dropped for the load and
// rebuilt from the definitions the migrations created.
//
// Prints a table and JSON lines beginning {"bench":"search".
#include <cctype>
#include <iomanip>
#include <iostream>
#include <random>
#include <set>

#include "api/search_query.h"
#include "bench/bench_util.h"
#include "common/db.h"
#include "common/json.h"
#include "eventstore/migrator.h"

namespace {

using scribe::Json;
using scribe::bench::Clock;
using scribe::bench::seconds_since;

const char* const kCommon[] = {
    "the",      "of",      "and",    "to",     "a",       "in",       "is",      "it",      "you",     "that",
    "he",       "was",     "for",    "on",     "are",     "with",     "as",      "I",       "his",     "they",
    "be",       "at",      "one",    "have",   "this",    "from",     "or",      "had",     "by",      "not",
    "word",     "but",     "what",   "some",   "we",      "can",      "out",     "other",   "were",    "all",
    "there",    "when",    "up",     "use",    "your",    "how",      "said",    "an",      "each",    "she",
    "which",    "do",      "their",  "time",   "if",      "will",     "way",     "about",   "many",    "then",
    "them",     "write",   "would",  "like",   "so",      "these",    "her",     "long",    "make",    "thing",
    "see",      "him",     "two",    "has",    "look",    "more",     "day",     "could",   "go",      "come",
    "did",      "number",  "sound",  "no",     "most",    "people",   "my",      "over",    "know",    "water",
    "than",     "call",    "first",  "who",    "may",     "down",     "side",    "been",    "now",     "find",
    "any",      "new",     "work",   "part",   "take",    "get",      "place",   "made",    "live",    "where",
    "after",    "back",    "little", "only",   "round",   "man",      "year",    "came",    "show",    "every",
    "good",     "me",      "give",   "our",    "under",   "name",     "very",    "through", "just",    "form",
    "sentence", "great",   "think",  "say",    "help",    "low",      "line",    "differ",  "turn",    "cause",
    "much",     "mean",    "before", "move",   "right",   "boy",      "old",     "too",     "same",    "tell",
    "does",     "set",     "three",  "want",   "air",     "well",     "also",    "play",    "small",   "end",
    "put",      "home",    "read",   "hand",   "port",    "large",    "spell",   "add",     "even",    "land",
    "here",     "must",    "big",    "high",   "such",    "follow",   "act",     "why",     "ask",     "men",
    "change",   "went",    "light",  "kind",   "off",     "need",     "house",   "picture", "try",     "us",
    "again",    "animal",  "point",  "mother", "world",   "near",     "build",   "self",    "earth",   "father",
    "head",     "stand",   "own",    "page",   "should",  "country",  "found",   "answer",  "school",  "grow",
    "study",    "still",   "learn",  "plant",  "cover",   "food",     "sun",     "four",    "between", "state",
    "keep",     "eye",     "never",  "last",   "let",     "thought",  "city",    "tree",    "cross",   "farm",
    "hard",     "start",   "might",  "story",  "saw",     "far",      "sea",     "draw",    "left",    "late",
    "run",      "while",   "press",  "close",  "night",   "real",     "life",    "few",     "north",   "meeting",
    "budget",   "library", "market", "energy", "project", "customer", "product", "season",  "episode"};

const char* const kSyllables[] = {"ba",  "ce",  "di",  "fo",  "gu",  "ha",  "je",  "ki",  "lo",  "mu",  "na",  "pe",
                                  "ri",  "so",  "tu",  "va",  "we",  "xi",  "yo",  "za",  "bri", "cla", "dre", "fli",
                                  "gro", "pla", "sta", "tre", "vin", "mor", "ten", "sil", "dar", "pen", "lun", "cor"};

// The rare word: planted in exactly kRare segments and found nowhere else
// (no made-up word contains "q").
const char* const kRareWord = "quixotically";
constexpr int kRare = 10;
// The medium word: planted in about 0.5% of the segments.
const char* const kMediumWord = "harbourmaster";

std::vector<std::string> vocabulary() {
  std::vector<std::string> words(std::begin(kCommon), std::end(kCommon));
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> syl(0, static_cast<int>(std::size(kSyllables)) - 1), len(2, 4);
  for (int i = 0; i < 20'000; ++i) {
    std::string w;
    for (int n = len(rng); n > 0; --n) w += kSyllables[syl(rng)];
    words.push_back(w);
  }
  return words;
}

void load(pqxx::connection& conn, int64_t segments, int transcriptions) {
  const auto words = vocabulary();
  // Zipf-like: the k-th word is drawn with weight 1 / (k + 1).
  std::vector<double> weights;
  for (std::size_t k = 0; k < words.size(); ++k) weights.push_back(1.0 / static_cast<double>(k + 1));
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int> sentence_len(6, 24);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> which(0, segments - 1);
  std::set<int64_t> rare;
  while (static_cast<int>(rare.size()) < kRare) rare.insert(which(rng));

  std::vector<std::string> indexes;
  {
    pqxx::work txn(conn);
    for (const auto& r : txn.exec("select indexname, indexdef from pg_indexes where tablename = 'search_segments' "
                                  "and indexname <> 'search_segments_pkey'")) {
      indexes.push_back(r[1].c_str());
      txn.exec("drop index " + txn.quote_name(r[0].c_str()));
    }
    // The transcriptions, one a minute apart, newest with the highest id.
    txn.exec_params(
        "insert into transcriptions(id, account_id, status, stage, attempt, source, url, title, language, "
        "pipeline_code, created_at, completed_at, updated_at) "
        "select i, 1, 'completed', 'completed', 1, case when i % 2 = 0 then 'upload' else 'video_site' end, "
        "case when i % 2 = 0 then null else 'https://www.youtube.com/watch?v=v' || i end, 'Episode ' || i, 'en', "
        "'standard', now() - make_interval(mins => $1 - i), now(), now() from generate_series(1, $1) i",
        transcriptions);
    txn.commit();
  }
  const int64_t per = segments / transcriptions;
  const int64_t batch = 20'000;
  for (int64_t start = 0; start < segments; start += batch) {
    Json rows = Json::array();
    for (int64_t id = start; id < std::min(segments, start + batch); ++id) {
      std::string text;
      const int n = sentence_len(rng);
      for (int i = 0; i < n; ++i) {
        std::string w = words[pick(rng)];
        if (i == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
        text += (i ? " " : "") + w;
      }
      if (rare.count(id)) text += std::string(" ") + kRareWord;
      if (id % 200 == 17) text += std::string(" the ") + kMediumWord;
      text += id % 9 == 0 ? "?" : ".";
      const int64_t t = 1 + std::min<int64_t>(id / per, transcriptions - 1);
      const int64_t pos = id - (t - 1) * per;
      rows.push_back({{"id", id + 1},
                      {"t", t},
                      {"s", pos * 4000},
                      {"e", pos * 4000 + 3500},
                      {"sp", pos % 3 == 2 ? Json(nullptr) : Json("SPEAKER_0" + std::to_string(pos % 2))},
                      {"x", text}});
    }
    pqxx::work txn(conn);
    txn.exec_params(
        "insert into search_segments(segment_id, transcription_id, account_id, transcription_created_at, start_ms, "
        "end_ms, speaker, text) select x.id, x.t, 1, tr.created_at, x.s, x.e, x.sp, x.x "
        "from jsonb_to_recordset($1::jsonb) as x(id bigint, t bigint, s bigint, e bigint, sp text, x text) "
        "join transcriptions tr on tr.id = x.t",
        rows.dump());
    txn.commit();
    std::cerr << "\rloaded " << std::min(segments, start + batch) << " segments" << std::flush;
  }
  std::cerr << "\n";
  pqxx::nontransaction txn(conn);
  for (const auto& def : indexes) {
    auto t0 = Clock::now();
    txn.exec(def);
    std::cerr << "built in " << std::fixed << std::setprecision(1) << seconds_since(t0) << " s: " << def << "\n";
  }
  txn.exec("vacuum analyze search_segments");
  txn.exec("analyze transcriptions");
}

struct Case {
  std::string name;
  std::string q;
  int limit = 20;
  int offset = 0;
  std::optional<std::vector<int64_t>> ids;
};

}  // namespace

int main() {
  scribe::bench::machine_info();
  try {
    const std::string base_url = scribe::bench::require_env("SCRIBE_BENCH_DATABASE_URL");
    const std::string dbname = scribe::bench::env_or("SCRIBE_BENCH_SEARCH_DB", "scribe_bench_search");
    const auto segments = static_cast<int64_t>(scribe::bench::env_double("SCRIBE_BENCH_SEARCH_SEGMENTS", 1e6));
    const int transcriptions = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_SEARCH_TRANSCRIPTIONS", 2000));
    const int runs = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_SEARCH_RUNS", 40));
    const bool reuse = scribe::bench::env_or("SCRIBE_BENCH_SEARCH_REUSE", "0") == "1";
    const bool explain = scribe::bench::env_or("SCRIBE_BENCH_SEARCH_EXPLAIN", "0") == "1";
    const std::string url = scribe::bench::with_database(base_url, dbname);

    bool loaded = false;
    if (reuse) {
      try {
        auto conn = scribe::db::open_connection(url, false);
        pqxx::nontransaction txn(*conn);
        loaded = txn.exec("select count(*) from search_segments")[0][0].as<int64_t>() == segments;
      } catch (const std::exception&) {
        loaded = false;
      }
    }
    if (!loaded) {
      scribe::bench::fresh_database(base_url, dbname);
      auto conn = scribe::db::open_connection(url, false);
      auto t0 = Clock::now();
      load(*conn, segments, transcriptions);
      std::cerr << "loaded and indexed in " << seconds_since(t0) << " s\n";
    }

    auto conn = scribe::db::open_connection(url);
    std::vector<int64_t> some_ids;
    for (int i = 0; i < 50; ++i) some_ids.push_back(1 + (i * 37) % transcriptions);
    const std::vector<Case> cases = {
        {"common 'the'", "the", 20, 0, std::nullopt},
        {"common 'the', offset 1000", "the", 100, 1000, std::nullopt},
        {"phrase 'and the'", "and the", 20, 0, std::nullopt},
        {"word 'meeting'", "meeting", 20, 0, std::nullopt},
        {"medium 'harbourmaster' (0.5%)", kMediumWord, 20, 0, std::nullopt},
        {"medium, offset 1000", kMediumWord, 100, 1000, std::nullopt},
        {"rare 'quixotically' (10)", kRareWord, 20, 0, std::nullopt},
        {"rare, mixed case 'QUIXOTIC'", "QUIXOTIC", 20, 0, std::nullopt},
        {"absent 'zzyzx'", "zzyzx", 20, 0, std::nullopt},
        {"two chars common 'in'", "in", 20, 0, std::nullopt},
        {"two chars rare 'qu'", "qu", 20, 0, std::nullopt},
        {"two chars 13% 'ng' (bigram index)", "ng", 20, 0, std::nullopt},
        {"two chars 1.3% 'ck' (bigram index)", "ck", 20, 0, std::nullopt},
        {"'the' in 50 transcriptions", "the", 20, 0, some_ids},
        {"rare in 50 transcriptions", kRareWord, 20, 0, some_ids},
    };

    std::cout << "\n"
              << std::left << std::setw(34) << "query" << std::right << std::setw(8) << "total" << std::setw(6)
              << "hits" << std::setw(10) << "p50 ms" << std::setw(10) << "p95 ms" << std::setw(10) << "max ms"
              << "\n";
    std::vector<std::string> json_lines;
    for (const auto& c : cases) {
      scribe::api::SearchQuery query;
      query.account_id = 1;
      query.q = c.q;
      query.limit = c.limit;
      query.offset = c.offset;
      query.transcription_ids = c.ids;
      std::vector<double> ms;
      scribe::api::SearchPage page;
      for (int i = 0; i < runs + 3; ++i) {
        auto t0 = Clock::now();
        pqxx::read_transaction txn(*conn);
        page = scribe::api::run_search(txn, query);
        txn.commit();
        if (i >= 3) ms.push_back(seconds_since(t0) * 1000.0);  // the first three warm the cache
      }
      std::sort(ms.begin(), ms.end());
      const double p50 = scribe::bench::percentile(ms, 0.5), p95 = scribe::bench::percentile(ms, 0.95);
      std::cout << std::left << std::setw(34) << c.name << std::right << std::setw(8) << page.total << std::setw(6)
                << page.hits.size() << std::fixed << std::setprecision(2) << std::setw(10) << p50 << std::setw(10)
                << p95 << std::setw(10) << ms.back() << std::endl;
      json_lines.push_back(Json{
          {"bench", "search"},
          {"query", c.name},
          {"q", c.q},
          {"segments", segments},
          {"transcriptions", transcriptions},
          {"limit", c.limit},
          {"offset", c.offset},
          {"total", page.total},
          {"hits", page.hits.size()},
          {"runs", runs},
          {"p50_ms", p50},
          {"p95_ms", p95},
          {"max_ms", ms.back()},
          {"target_p95_ms",
           50}}.dump());
      if (explain) {
        pqxx::read_transaction txn(*conn);
        auto plans = scribe::api::explain_search(txn, query, true);
        std::cout << "  count:\n" << plans.count << "  page:\n" << plans.page << "\n";
      }
    }
    std::cout << "\n";
    for (const auto& l : json_lines) std::cout << l << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "search_benchmark: " << e.what() << "\n";
    return 1;
  }
}
