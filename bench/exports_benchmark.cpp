// Raw exports of a 12-hour transcript: times /subtitles (every format,
// presets netflix and youtube, word and sentence mode) and /transcript (txt,
// md) on a synthetic transcript of about 100,000 words in 8,000 segments with
// three speakers. Target: under 200 ms each, reading included.
//
// Rendering runs api::render_subtitles, the function the handler calls. With
// a database, the transcript is written by projections::write_transcript_rows
// (the segments projection's own code) and each case reads it back with the
// handler's readers (api::load_segments_and_words, api::load_segments) in a
// read-only transaction and renders it, as the handler does minus HTTP.
//
//   SCRIBE_BENCH_EXPORTS_RUNS      timed runs per case                      default 7
//   SCRIBE_BENCH_EXPORTS_WORDS     words in the transcript                  default 100000
//   SCRIBE_BENCH_DATABASE_URL      optional: a database on the cluster; the benchmark then
//                                  creates (after dropping it) its own database next to it,
//                                  loads the rows and also times reading plus rendering
//   SCRIBE_BENCH_EXPORTS_DB        name of that database                    default scribe_bench_exports
//   SCRIBE_BENCH_EXPORTS_ANALYZE   1: ANALYZE the tables after loading      default 0
//
// `exports_benchmark --write-into URL ID` only writes the synthetic transcript
// as the segments and words of transcription ID in the database at URL (its
// rows replaced, its duration set to the transcript's) and exits: the web
// console's benchmark (bench/console.sh) serves a 12-hour transcript that way
// without recognizing 12 hours of audio. A benchmark database only.
//
// Prints one line per case and JSON lines beginning {"bench":"exports". CPU
// columns are per run: "cpu" is this process (user + system), "db cpu" the
// PostgreSQL backend serving the benchmark's connection (from /proc, so only
// when the server runs on this machine; 10 ms ticks, averaged over the runs).
// Memory of the database cases: each runs once more in a fresh process (this
// executable with --peak), which reports its peak resident set during that
// one read and render (VmHWM, reset first) above its resident set before it
// (the binary, libraries and connection: the "+" figure). A fresh process,
// because a long-lived one keeps freed memory and its peak says little about
// one export. The JSON lines also carry this process's own peak.
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

#include "api/export_rows.h"
#include "bench/bench_util.h"
#include "common/db.h"
#include "common/json.h"
#include "domain/subtitles.h"
#include "domain/transcript_text.h"
#include "eventstore/migrator.h"
#include "domain/transcript_artifact.h"
#include "projections/segments_projection.h"

namespace {

using scribe::bench::Clock;
namespace api = scribe::api;
namespace sub = scribe::subtitles;
namespace tr = scribe::transcript;

// Sentences of 6-19 words at about 2.6 words per second, a speaker change
// every few sentences and 0.5-2 s of silence between sentences: 100,000
// words last about 12 hours.
api::TranscriptRows synthesize(std::size_t n_words) {
  std::mt19937 rng(12);
  static const std::vector<std::string> vocab = {
      "the",      "budget",  "library",  "we",       "need",   "about",   "two",  "million", "dollars", "for",
      "building", "and",     "books",    "children", "town",   "reading", "room", "meeting", "weekly",  "welcome",
      "good",     "morning", "everyone", "a",        "bigger", "of",      "next", "year",    "talk",    "would",
      "like",     "to",      "please",   "tell",     "us",     "how",     "much"};
  api::TranscriptRows s;
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

// The same transcript as the artifact a worker stores (times in seconds;
// the projection rounds them back to the same milliseconds).
scribe::transcript::TranscriptArtifact to_artifact(const api::TranscriptRows& s) {
  scribe::transcript::TranscriptArtifact a;
  a.language = "en";
  a.engine = "synthetic";
  a.speakers = 3;
  a.duration_seconds = static_cast<double>(s.segments.back().end_ms) / 1000.0;
  std::size_t w = 0;
  for (const auto& seg : s.segments) {
    scribe::transcript::ArtifactSegment as;
    as.id = seg.id;
    as.start = static_cast<double>(seg.start_ms) / 1000.0;
    as.end = static_cast<double>(seg.end_ms) / 1000.0;
    as.speaker = seg.speaker;
    as.text = seg.text;
    for (; w < s.words.size() && s.words[w].segment_id == seg.id; ++w)
      as.words.push_back({s.words[w].text, static_cast<double>(s.words[w].start_ms) / 1000.0,
                          static_cast<double>(s.words[w].end_ms) / 1000.0, 0.9, s.words[w].punctuation});
    a.segments.push_back(std::move(as));
  }
  return a;
}

// A field of /proc/self/status in kB (VmRSS, VmHWM); -1 when unknown.
long status_kb(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

// Resets VmHWM (the peak resident set) to the current VmRSS, so that the
// peak of each case is its own (Linux 4.0 and later).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000.0 +
          static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000.0);
}

// User + system CPU of another process of this machine, in ms; -1 when unknown.
double other_cpu_ms(long pid) {
  if (pid <= 0) return -1;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Result {
  double p50_ms;
  double max_ms;
  double cpu_ms;     // per run, this process
  double db_cpu_ms;  // per run, the PostgreSQL backend; -1 when not measured
  std::size_t bytes;
  long rss_before_kb = -1;  // resident set of a fresh process before one run of the case
  long peak_rss_kb = -1;    // its peak during the run
};

Result time_case(int runs, const std::function<std::string()>& f, long backend_pid = 0) {
  std::vector<double> ms;
  std::size_t bytes = 0;
  const double cpu0 = process_cpu_ms(), db0 = other_cpu_ms(backend_pid);
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    bytes = f().size();
    ms.push_back(scribe::bench::seconds_since(t0) * 1000.0);
  }
  const double cpu = (process_cpu_ms() - cpu0) / runs;
  const double db = db0 < 0 ? -1 : (other_cpu_ms(backend_pid) - db0) / runs;
  std::sort(ms.begin(), ms.end());
  return {scribe::bench::percentile(ms, 0.5), ms.back(), cpu, db, bytes};
}

void report(const std::string& name, const Result& r, std::size_t words, std::size_t segments) {
  std::cout << std::left << std::setw(44) << name << std::right << std::fixed << std::setprecision(1) << std::setw(8)
            << r.p50_ms << " ms p50" << std::setw(8) << r.max_ms << " ms max" << std::setw(8) << r.cpu_ms << " ms cpu";
  if (r.db_cpu_ms >= 0) std::cout << std::setw(7) << r.db_cpu_ms << " ms db cpu";
  std::cout << std::setw(10) << r.bytes << " bytes";
  if (r.peak_rss_kb >= 0)
    std::cout << std::setw(6) << (r.peak_rss_kb - r.rss_before_kb + 512) / 1024 << " MiB peak (+"
              << (r.rss_before_kb + 512) / 1024 << ")";
  std::cout << "\n";
  scribe::Json j = {{"bench", "exports"}, {"case", name},
                    {"p50_ms", r.p50_ms}, {"max_ms", r.max_ms},
                    {"cpu_ms", r.cpu_ms}, {"bytes", r.bytes},
                    {"words", words},     {"segments", segments},
                    {"target_ms", 200},   {"process_peak_rss_kb", status_kb("VmHWM")}};
  if (r.peak_rss_kb >= 0) {
    j["rss_before_kb"] = r.rss_before_kb;
    j["peak_rss_kb"] = r.peak_rss_kb;
  }
  if (r.db_cpu_ms >= 0) j["db_cpu_ms"] = r.db_cpu_ms;
  std::cout << j.dump() << std::endl;  // flushed: migration logs go to stderr meanwhile
}

// What the handlers render from rows: `what` is a subtitle format, or txt/md
// for /transcript.
std::string render(const std::string& what, const std::string& preset, const api::TranscriptRows& rows) {
  if (what == "txt") return tr::render_txt(rows.segments, {});
  if (what == "md") return tr::render_md("Synthetic meeting", {}, rows.segments, {});
  return api::render_subtitles(rows, what, {sub::find_preset(preset), false}).body;
}

struct Case {
  std::string name, what, preset;
  bool words;  // word mode (mode=auto or word); false: sentence mode or /transcript
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string preset : {"netflix", "youtube"})
    for (const std::string f : {"srt", "vtt", "vtt-karaoke", "json"}) {
      out.push_back({"subtitles " + f + " " + preset + " word", f, preset, true});
      out.push_back({"subtitles " + f + " " + preset + " sentence", f, preset, false});
    }
  out.push_back({"transcript txt", "txt", "", false});
  out.push_back({"transcript md", "md", "", false});
  return out;
}

// The handlers' path minus HTTP: one read-only transaction, the rows the
// handler reads for the case, then the rendering.
std::string read_and_render(pqxx::connection& conn, const Case& c) {
  api::TranscriptRows rows;
  {
    pqxx::read_transaction txn(conn);
    if (c.words) rows = api::load_segments_and_words(txn, 1);
    else rows.segments = api::load_segments(txn, 1);
  }
  return render(c.what, c.preset, rows);
}

// Child side of peak_in_fresh_process: prints "<VmRSS before> <VmHWM>" in kB.
int peak_child(std::size_t index, const std::string& url) {
  auto conn = scribe::db::open_connection(url);
  reset_peak_rss();
  const long before = status_kb("VmRSS");
  const std::size_t bytes = read_and_render(*conn, cases().at(index)).size();
  std::cout << before << " " << status_kb("VmHWM") << " " << bytes << "\n";
  return 0;
}

std::pair<long, long> peak_in_fresh_process(std::size_t index, const std::string& url) {
  const std::string cmd =
      "/proc/" + std::to_string(getpid()) + "/exe --peak " + std::to_string(index) + " '" + url + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, -1};
  long before = -1, peak = -1;
  if (std::fscanf(p, "%ld %ld", &before, &peak) != 2) before = peak = -1;
  pclose(p);
  return {before, peak};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::string(argv[1]) == "--peak") return peak_child(std::stoul(argv[2]), argv[3]);
    if (argc == 4 && std::string(argv[1]) == "--write-into") {
      const auto n = static_cast<std::size_t>(scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_WORDS", 100000));
      const auto artifact = to_artifact(synthesize(n));
      const int64_t id = std::stoll(argv[3]);
      auto conn = scribe::db::open_connection(argv[2]);
      pqxx::work txn(*conn);
      txn.exec_params("delete from words where transcription_id = $1", id);
      txn.exec_params("delete from segments where transcription_id = $1", id);
      scribe::projections::write_transcript_rows(txn, id, artifact);
      txn.exec_params("update transcriptions set duration_seconds = $2 where id = $1", id, artifact.duration_seconds);
      txn.commit();
      std::cout << "wrote " << artifact.segments.size() << " segments, " << artifact.duration_seconds / 3600.0
                << " h into transcription " << id << "\n";
      return 0;
    }
    scribe::bench::machine_info();  // not in the --peak child: its output is read by the parent
    const int runs = static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_RUNS", 7));
    const auto n = static_cast<std::size_t>(scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_WORDS", 100000));
    const api::TranscriptRows s = synthesize(n);
    std::cout << "synthetic transcript: " << s.words.size() << " words, " << s.segments.size() << " segments, "
              << std::setprecision(2) << std::fixed << s.segments.back().end_ms / 3600000.0 << " h\n";
    const api::TranscriptRows no_words{s.segments, {}};
    for (const auto& c : cases()) {
      auto r = time_case(runs, [&] { return render(c.what, c.preset, c.words ? s : no_words); });
      report("render " + c.name, r, s.words.size(), s.segments.size());
    }

    const std::string base_url = scribe::bench::env_or("SCRIBE_BENCH_DATABASE_URL", "");
    if (base_url.empty()) return 0;
    const std::string dbname = scribe::bench::env_or("SCRIBE_BENCH_EXPORTS_DB", "scribe_bench_exports");
    const std::string url = scribe::bench::fresh_database(base_url, dbname);
    auto conn = scribe::db::open_connection(url);
    {
      const auto artifact = to_artifact(s);
      auto t0 = Clock::now();
      pqxx::work txn(*conn);
      scribe::projections::write_transcript_rows(txn, 1, artifact);
      txn.commit();
      std::cout << "rows written by the segments projection in " << std::setprecision(0)
                << scribe::bench::seconds_since(t0) * 1000.0 << " ms\n";
    }
    if (scribe::bench::env_double("SCRIBE_BENCH_EXPORTS_ANALYZE", 0) != 0)
      pqxx::nontransaction(*conn).exec("analyze segments; analyze words");
    long backend = 0;
    {
      pqxx::nontransaction txn(*conn);
      backend = txn.exec("select pg_backend_pid()")[0][0].as<long>();
    }
    const auto all = cases();
    for (std::size_t i = 0; i < all.size(); ++i) {
      auto r = time_case(
          runs, [&] { return read_and_render(*conn, all[i]); }, backend);
      std::tie(r.rss_before_kb, r.peak_rss_kb) = peak_in_fresh_process(i, url);
      report("db+render " + all[i].name, r, s.words.size(), s.segments.size());
    }
    // For comparison, the reads alone, and the 100,000 rows of `words` read
    // as the handler did before migration 011 (same SQL, same conversion).
    auto words_rows = [](pqxx::transaction_base& txn) {
      auto res = txn.exec_params(
          "select text, punctuation, start_ms, end_ms, speaker, segment_id from words "
          "where transcription_id = $1 order by word_index",
          1);
      auto opt = [](const pqxx::field& f) {
        return f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str());
      };
      std::vector<tr::Word> words;
      words.reserve(res.size());
      for (const auto& row : res)
        words.push_back({row[0].c_str(), opt(row[1]), row[2].as<int64_t>(), row[3].as<int64_t>(), opt(row[4]),
                         row[5].as<int64_t>()});
      return words;
    };
    auto r = time_case(
        runs,
        [&] {
          pqxx::read_transaction txn(*conn);
          return std::string(api::load_segments_and_words(txn, 1).words.size(), 'w');
        },
        backend);
    report("db read segments and packed words", r, s.words.size(), s.segments.size());
    r = time_case(
        runs,
        [&] {
          pqxx::read_transaction txn(*conn);
          return std::string(words_rows(txn).size(), 'w');
        },
        backend);
    report("db read words rows (before 011)", r, s.words.size(), s.segments.size());
    r = time_case(
        runs,
        [&] {
          api::TranscriptRows rows;
          {
            pqxx::read_transaction txn(*conn);
            rows.segments = api::load_segments(txn, 1);
            rows.words = words_rows(txn);
          }
          return render("srt", "netflix", rows);
        },
        backend);
    report("db+render srt netflix word (before 011)", r, s.words.size(), s.segments.size());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "exports_benchmark: " << e.what() << "\n";
    return 1;
  }
}
