// Raw exports of a 12-hour transcript: times the domain rendering of
// /subtitles (every format, presets netflix and youtube, word and sentence
// mode) and /transcript (txt, md) on a synthetic transcript of about 100,000
// words in 8,000 segments with three speakers. Target: under 200 ms each.
//
//   SCRIBE_BENCH_EXPORTS_RUNS      timed runs per case                      default 7
//   SCRIBE_BENCH_EXPORTS_WORDS     words in the transcript                  default 100000
//   SCRIBE_BENCH_DATABASE_URL      optional: a database on the cluster; the benchmark then
//                                  creates (after dropping it) its own database next to it,
//                                  loads the rows and also times reading them with the
//                                  handlers' SQL plus rendering (the HTTP-less path)
//   SCRIBE_BENCH_EXPORTS_DB        name of that database                    default scribe_bench_exports
//
// Prints one line per case and JSON lines beginning {"bench":"exports".
#include <sys/resource.h>

#include <functional>
#include <iomanip>
#include <iostream>
#include <random>

#include "api/export_rows.h"
#include "bench/bench_util.h"
#include "common/db.h"
#include "common/json.h"
#include "domain/subtitles.h"
#include "domain/transcript_text.h"
#include "eventstore/migrator.h"

namespace {

using scribe::bench::Clock;
namespace sub = scribe::subtitles;
namespace tr = scribe::transcript;

struct Synthetic {
  std::vector<tr::Segment> segments;
  std::vector<tr::Word> words;
};

// Sentences of 6-19 words at about 2.6 words per second, a speaker change
// every few sentences and 0.5-2 s of silence between sentences: 100,000
// words last about 12 hours.
Synthetic synthesize(std::size_t n_words) {
  std::mt19937 rng(12);
  static const std::vector<std::string> vocab = {
      "the", "budget", "library", "we", "need", "about", "two", "million", "dollars", "for", "building", "and",
      "books", "children", "town", "reading", "room", "meeting", "weekly", "welcome", "good", "morning", "everyone",
      "a", "bigger", "of", "next", "year", "talk", "would", "like", "to", "please", "tell", "us", "how", "much"};
  Synthetic s;
  int64_t clock = 0;
  int speaker = 0;
  while (s.words.size() < n_words) {
    tr::Segment seg;
    seg.id = static_cast<int64_t>(s.segments.size()) + 1;
    if (rng() % 3 == 0) speaker = static_cast<int>(rng() % 3);
    seg.speaker = "SPEAKER_0" + std::to_string(speaker);
    seg.start_ms = clock;
    const std::size_t len = 6 + rng() % 14;
    for (std::size_t k = 0; k < len && s.words.size() < n_words; ++k) {
      tr::Word w;
      w.text = vocab[rng() % vocab.size()];
      if (k == 0) w.text[0] = static_cast<char>(w.text[0] - 'a' + 'A');
      if (k + 1 == len) w.punctuation = rng() % 5 ? "." : "?";
      else if (rng() % 9 == 0) w.punctuation = ",";
      w.start_ms = clock;
      w.end_ms = clock + 180 + static_cast<int64_t>(rng() % 250);
      w.speaker = seg.speaker;
      w.segment_id = seg.id;
      clock = w.end_ms + static_cast<int64_t>(rng() % 60);
      if (!seg.text.empty()) seg.text += ' ';
      seg.text += w.text + w.punctuation.value_or("");
      s.words.push_back(std::move(w));
    }
    seg.end_ms = clock;
    clock += 500 + static_cast<int64_t>(rng() % 1500);
    s.segments.push_back(std::move(seg));
  }
  return s;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Result {
  double p50_ms;
  double max_ms;
  std::size_t bytes;
};

Result time_case(int runs, const std::function<std::string()>& f) {
  std::vector<double> ms;
  std::size_t bytes = 0;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    bytes = f().size();
    ms.push_back(scribe::bench::seconds_since(t0) * 1000.0);
  }
  std::sort(ms.begin(), ms.end());
  return {scribe::bench::percentile(ms, 0.5), ms.back(), bytes};
}

void report(const std::string& name, const Result& r, std::size_t words, std::size_t segments) {
  std::cout << std::left << std::setw(44) << name << std::right << std::fixed << std::setprecision(1) << std::setw(9)
            << r.p50_ms << " ms p50" << std::setw(9) << r.max_ms << " ms max" << std::setw(11) << r.bytes
            << " bytes\n";
  scribe::Json j = {{"bench", "exports"}, {"case", name},          {"p50_ms", r.p50_ms},
                    {"max_ms", r.max_ms}, {"bytes", r.bytes},      {"words", words},
                    {"segments", segments}, {"target_ms", 200},    {"peak_rss_kb", peak_rss_kb()}};
  std::cout << j.dump() << std::endl;  // flushed: migration logs go to stderr meanwhile
}

// The render of one export from rows, as the handlers do it.
std::string render(const std::string& what, const std::string& preset, const std::vector<tr::Segment>& segments,
                   const std::vector<tr::Word>& words) {
  if (what == "txt") return tr::render_txt(segments, {});
  if (what == "md") return tr::render_md("Synthetic meeting", {}, segments, {});
  const sub::BuildOptions o{sub::find_preset(preset), false};
  const auto cues = words.empty() ? sub::build_from_segments(segments, o) : sub::build_from_words(words, o);
  if (what == "srt") return sub::render_srt(cues);
  if (what == "vtt") return sub::render_vtt(cues);
  if (what == "vtt-karaoke") return sub::render_vtt_karaoke(cues);
  return sub::render_json(cues);
}

void load_rows(pqxx::connection& conn, const Synthetic& s) {
  pqxx::work txn(conn);
  {
    pqxx::stream_to seg(txn, "segments",
                        std::vector<std::string>{"id", "transcription_id", "segment_index", "start_ms", "end_ms",
                                                 "speaker", "text"});
    for (std::size_t i = 0; i < s.segments.size(); ++i) {
      const auto& x = s.segments[i];
      seg << std::make_tuple(x.id, 1, static_cast<int>(i), x.start_ms, x.end_ms, *x.speaker, x.text);
    }
    seg.complete();
  }
  {
    pqxx::stream_to w(txn, "words",
                      std::vector<std::string>{"transcription_id", "word_index", "segment_id", "text", "start_ms",
                                               "end_ms", "punctuation", "speaker"});
    for (std::size_t i = 0; i < s.words.size(); ++i) {
      const auto& x = s.words[i];
      w << std::make_tuple(1, static_cast<int>(i), x.segment_id, x.text, x.start_ms, x.end_ms, x.punctuation,
                           *x.speaker);
    }
    w.complete();
  }
  txn.commit();
}

}  // namespace

int main() {
  try {
    const int runs = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_RUNS", 7));
    const auto n = static_cast<std::size_t>(scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_WORDS", 100000));
    const Synthetic s = synthesize(n);
    std::cout << "synthetic transcript: " << s.words.size() << " words, " << s.segments.size() << " segments, "
              << std::setprecision(2) << std::fixed << s.segments.back().end_ms / 3600000.0 << " h\n";
    const std::vector<tr::Word> no_words;
    std::vector<std::tuple<std::string, std::string, std::string>> cases;  // name, what, preset
    for (const std::string preset : {"netflix", "youtube"})
      for (const std::string f : {"srt", "vtt", "vtt-karaoke", "json"}) {
        cases.emplace_back("subtitles " + f + " " + preset + " word", f, preset);
        cases.emplace_back("subtitles " + f + " " + preset + " sentence", f, preset);
      }
    cases.emplace_back("transcript txt", "txt", "");
    cases.emplace_back("transcript md", "md", "");
    for (const auto& [name, what, preset] : cases) {
      const bool sentence = name.size() > 8 && name.compare(name.size() - 8, 8, "sentence") == 0;
      auto r = time_case(runs, [&, w = what, p = preset] { return render(w, p, s.segments, sentence ? no_words : s.words); });
      report(name, r, s.words.size(), s.segments.size());
    }

    const std::string base_url = scribe::bench::env_or("SCRIBE_BENCH_DATABASE_URL", "");
    if (base_url.empty()) return 0;
    const std::string dbname = scribe::bench::env_or("SCRIBE_BENCH_EXPORTS_DB", "scribe_bench_exports");
    const std::string url = scribe::bench::fresh_database(base_url, dbname);
    {
      auto conn = scribe::db::open_connection(url, false);
      load_rows(*conn, s);
    }
    auto conn = scribe::db::open_connection(url);
    auto read_and_render = [&](const std::string& what, const std::string& preset, bool with_words) {
      std::vector<tr::Segment> segs;
      std::vector<tr::Word> ws;
      {
        pqxx::read_transaction txn(*conn);
        segs = scribe::api::load_segments(txn, 1);
        if (with_words) ws = scribe::api::load_words(txn, 1);
      }
      return render(what, preset, segs, ws);
    };
    for (const auto& [name, what, preset, words] :
         std::vector<std::tuple<std::string, std::string, std::string, bool>>{
             {"db+render subtitles srt netflix word", "srt", "netflix", true},
             {"db+render subtitles json youtube word", "json", "youtube", true},
             {"db+render subtitles vtt youtube sentence", "vtt", "youtube", false},
             {"db+render transcript txt", "txt", "", false}}) {
      auto r = time_case(runs, [&, w = what, p = preset, ww = words] { return read_and_render(w, p, ww); });
      report(name, r, s.words.size(), s.segments.size());
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "exports_benchmark: " << e.what() << "\n";
    return 1;
  }
}
