// Speed and memory of the enrichment stage (enrichment::enrich_transcript,
// what the worker runs after recognition) on long transcripts. Target (issue
// 19): a 1-hour transcript enriched in under 2 s and a 12-hour one in under
// 20 s on the 2-core machine, peak memory reported. A plain program, not a
// Google Benchmark: it prints figures and asserts none of them.
//
// The transcripts are made of real English, the 40 one-minute passages of
// bench/enrichment_eval/passages/ (one subject each): every sentence is a
// segment timed at 150 words a minute, the speaker alternates between
// SPEAKER_00 and SPEAKER_01 every 2-5 segments, and the topic changes with
// every passage. The 40 passages last about 42 minutes, so the sequence is
// repeated, shuffled anew each round (std::mt19937 seeded with the round), so
// that topics recur in other orders and with other neighbours, until the
// requested length. A synthetic vocabulary would not do: what enrichment
// costs depends on real sentences, keyphrases and how alike sections are.
//
// Modes:
//   (none)             the machine line, then one child process of this
//                      program per size (--hours 1, --hours 12), so that each
//                      size's peak resident set is its own; their lines, a
//                      table and one JSON line per size {"bench":"enrichment",...}
//   --hours H          one size in this process: the transcript's words and
//                      segments, its resident set before enriching, the wall
//                      and CPU seconds of enrich_transcript (best of
//                      SCRIBE_BENCH_ENRICH_RUNS runs: 5 up to 2 hours, else 1),
//                      the artifact's JSON size and serialization time
//                      (to_json + dump, as store_artifact does) and the peak
//                      resident set (getrusage ru_maxrss)
//   --setup-db H       with SCRIBE_BENCH_DATABASE_URL (a migrated database) and
//                      SCRIBE_OBJECT_STORE_DIR: opens an enterprise account with
//                      credit, creates an upload transcription of H hours and
//                      completes it through the commands as the worker does
//                      (transcript object, real enrichment artifact,
//                      complete_attempt, so the inline projections write the
//                      segments and enrichment rows); prints
//                      "account_id transcription_id" on stdout, timings on
//                      stderr. bench/timestamps_latency.sh uses it.
//
// Settings:
//   SCRIBE_BENCH_ENRICH_HOURS     sizes of the default mode          default 1,12
//   SCRIBE_BENCH_ENRICH_RUNS      timed runs per size                default 5 up to 2 h, else 1
//   SCRIBE_BENCH_PASSAGES_DIR     the passages                       default bench/enrichment_eval/passages
//                                 (from the working directory, else next to this source file)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "commands/account_commands.h"
#include "commands/transcription_commands.h"
#include "common/crypto.h"
#include "common/db.h"
#include "common/json.h"
#include "common/object_store.h"
#include "domain/enrichment_artifact.h"
#include "domain/transcript_artifact.h"
#include "enrichment/artifact_store.h"
#include "enrichment/enricher.h"
#include "projections/inline_projections.h"

namespace {

namespace fs = std::filesystem;
using scribe::bench::Clock;
namespace tr = scribe::transcript;
using OrderedJson = nlohmann::ordered_json;

constexpr double kSecondsPerWord = 60.0 / 150.0;  // 150 words a minute, pauses included

// One passage: its file name and its sentences.
struct Passage {
  std::string name;
  std::vector<std::string> sentences;
};

fs::path passages_dir() {
  const std::string configured = scribe::bench::env_or("SCRIBE_BENCH_PASSAGES_DIR", "");
  if (!configured.empty()) return configured;
  const fs::path relative = "bench/enrichment_eval/passages";
  if (fs::is_directory(relative)) return relative;
  // Run from the build directory: the source tree is where this file was compiled from.
  return fs::path(__FILE__).parent_path() / "enrichment_eval" / "passages";
}

// Sentences end at '.', '?' or '!' followed by white space or the end; the
// passages are plain prose (no digits, no abbreviations), so that is enough.
std::vector<std::string> split_sentences(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!current.empty() && current.back() != ' ') current += ' ';
      continue;
    }
    current += c;
    const bool end = c == '.' || c == '?' || c == '!';
    if (end && (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1])))) {
      out.push_back(current);
      current.clear();
    }
  }
  while (!current.empty() && current.back() == ' ') current.pop_back();
  if (!current.empty()) out.push_back(current);
  return out;
}

std::vector<Passage> load_passages() {
  const fs::path dir = passages_dir();
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".txt") files.push_back(e.path());
  if (files.empty()) throw std::runtime_error("no passages in " + dir.string() + " (set SCRIBE_BENCH_PASSAGES_DIR)");
  std::sort(files.begin(), files.end());  // directory order is not stable; the seeds must mean the same text
  std::vector<Passage> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back({f.stem().string(), split_sentences(ss.str())});
  }
  return out;
}

// A sentence as the recognizer's words: text and trailing punctuation apart.
std::vector<std::pair<std::string, std::string>> words_of(const std::string& sentence) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(sentence);
  for (std::string token; in >> token;) {
    std::size_t cut = token.size();
    while (cut > 0 && std::ispunct(static_cast<unsigned char>(token[cut - 1])) && token[cut - 1] != '\'') --cut;
    if (cut == 0) continue;
    out.emplace_back(token.substr(0, cut), token.substr(cut));
  }
  return out;
}

struct Synthetic {
  tr::TranscriptArtifact transcript;
  std::size_t words = 0;
  int passages_used = 0;
};

// The transcript of `hours` hours (it ends before hours * 3600 s, so that the
// duration a create is priced on covers it). Deterministic.
Synthetic synthesize(const std::vector<Passage>& passages, double hours) {
  const double limit = hours * 3600.0;
  Synthetic s;
  tr::TranscriptArtifact& t = s.transcript;
  t.language = "en";
  t.engine = "synthetic";
  t.speakers = 2;
  std::mt19937 speaker_rng(7);
  int speaker = 0;
  int left_for_speaker = 2 + static_cast<int>(speaker_rng() % 4);
  double clock = 0;
  for (unsigned round = 0;; ++round) {
    std::vector<std::size_t> order(passages.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 shuffle_rng(1000 + round);
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (const std::size_t p : order) {
      ++s.passages_used;
      for (const auto& sentence : passages[p].sentences) {
        const auto words = words_of(sentence);
        if (words.empty()) continue;
        const double length = static_cast<double>(words.size()) * kSecondsPerWord;
        if (clock + length > limit) {
          t.duration_seconds = clock;
          return s;
        }
        tr::ArtifactSegment seg;
        seg.id = static_cast<int64_t>(t.segments.size()) + 1;
        seg.start = clock;
        seg.end = clock + length - 0.3;  // the 0.3 s pause before the next sentence
        seg.speaker = tr::speaker_label(speaker);
        seg.text = sentence;
        const double per_word = (seg.end - seg.start) / static_cast<double>(words.size());
        for (std::size_t k = 0; k < words.size(); ++k) {
          const double at = seg.start + per_word * static_cast<double>(k);
          seg.words.push_back({words[k].first, at, at + per_word * 0.9, 0.9,
                               words[k].second.empty() ? std::nullopt : std::optional<std::string>(words[k].second)});
        }
        s.words += words.size();
        t.segments.push_back(std::move(seg));
        clock += length;
        if (--left_for_speaker == 0) {
          speaker = 1 - speaker;
          left_for_speaker = 2 + static_cast<int>(speaker_rng() % 4);
        }
      }
    }
  }
}

double max_rss_mib() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_maxrss) / 1024.0;
}

// VmRSS now, in MiB (ru_maxrss is only the peak).
double rss_now_mib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

std::string hours_label(double hours) {
  std::ostringstream o;
  o << hours;
  return o.str();
}

// --hours H: one size, measured in this process.
int run_size(double hours) {
  scribe::bench::machine_info();
  const auto t_build = Clock::now();
  const auto passages = load_passages();
  Synthetic s = synthesize(passages, hours);
  const double build_s = scribe::bench::seconds_since(t_build);
  const auto& t = s.transcript;
  const double rss_transcript = rss_now_mib(), peak_before = max_rss_mib();
  const int default_runs = hours <= 2 ? 5 : 1;
  const int runs = std::max(1, static_cast<int>(scribe::bench::env_double("SCRIBE_BENCH_ENRICH_RUNS", default_runs)));
  std::cout << std::fixed << std::setprecision(2) << hours_label(hours) << " h: " << s.words << " words, "
            << t.segments.size() << " segments, " << s.passages_used << " passage readings (" << passages.size()
            << " distinct), " << t.duration_seconds / 3600.0 << " h; built in " << build_s
            << " s; RSS with the transcript " << rss_transcript << " MiB (peak so far " << peak_before << " MiB)\n";

  double best_wall = 1e300, best_cpu = 0, total_wall = 0;
  scribe::enrichment::EnrichmentArtifact artifact;
  for (int r = 0; r < runs; ++r) {
    artifact = {};  // the previous run's artifact is freed first, so the peak is one run's
    const double cpu0 = scribe::bench::process_cpu_seconds();
    const auto t0 = Clock::now();
    artifact = scribe::enrichment::enrich_transcript(t);
    const double wall = scribe::bench::seconds_since(t0);
    const double cpu = scribe::bench::process_cpu_seconds() - cpu0;
    total_wall += wall;
    std::cout << "  run " << r + 1 << ": " << std::setprecision(3) << wall << " s wall, " << cpu << " s cpu\n";
    if (wall < best_wall) {
      best_wall = wall;
      best_cpu = cpu;
    }
  }
  const double peak_enrich = max_rss_mib();

  // Serialization as store_artifact does it before hashing and storing.
  double best_json = 1e300;
  std::size_t json_bytes = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    const std::string bytes = scribe::enrichment::to_json(artifact).dump();
    best_json = std::min(best_json, scribe::bench::seconds_since(t0));
    json_bytes = bytes.size();
  }
  const double peak_all = max_rss_mib();

  const double target = hours <= 1 ? 2.0 : hours <= 12 ? 20.0 : 0.0;
  std::cout << std::setprecision(3) << "  enrich_transcript: best " << best_wall << " s wall, " << best_cpu
            << " s cpu (mean " << total_wall / runs << " s over " << runs << " runs); " << artifact.sections.size()
            << " sections, " << artifact.chapters.size() << " chapters, " << artifact.acts.size() << " acts, "
            << artifact.qna.size() << " Q&A\n"
            << "  artifact JSON: " << json_bytes << " bytes, serialized in " << best_json * 1000.0 << " ms\n"
            << std::setprecision(1) << "  peak RSS: " << peak_enrich << " MiB after enriching (+"
            << peak_enrich - rss_transcript << " MiB over the transcript's " << rss_transcript << " MiB), " << peak_all
            << " MiB with serialization\n";
  // ordered: "bench" first, as every benchmark's JSON lines begin
  OrderedJson j = {{"bench", "enrichment"},
                   {"hours", hours},
                   {"words", s.words},
                   {"segments", t.segments.size()},
                   {"duration_seconds", t.duration_seconds},
                   {"runs", runs},
                   {"wall_seconds", best_wall},
                   {"cpu_seconds", best_cpu},
                   {"mean_wall_seconds", total_wall / runs},
                   {"sections", artifact.sections.size()},
                   {"chapters", artifact.chapters.size()},
                   {"acts", artifact.acts.size()},
                   {"qna", artifact.qna.size()},
                   {"artifact_json_bytes", json_bytes},
                   {"serialize_ms", best_json * 1000.0},
                   {"rss_transcript_mib", rss_transcript},
                   {"peak_rss_before_enrich_mib", peak_before},
                   {"peak_rss_mib", peak_enrich},
                   {"peak_rss_with_serialize_mib", peak_all}};
  if (target > 0) j["target_seconds"] = target;
  std::cout << j.dump() << std::endl;
  return 0;
}

// Default mode: each size in a child process (this executable with --hours),
// since ru_maxrss only grows: a process that ran 12 h cannot report 1 h's peak.
int run_all() {
  scribe::bench::machine_info();
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const fs::path tmp = fs::temp_directory_path() / ("scribe-enrich-speed-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::vector<OrderedJson> results;
  for (const auto& h : scribe::bench::env_list("SCRIBE_BENCH_ENRICH_HOURS", "1,12")) {
    const std::string out = (tmp / "out.txt").string(), err = (tmp / "err.txt").string();
    const auto child = scribe::bench::run_child({self, "--hours", h}, out, err);
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("machine:", 0) == 0 || line.rfind("{\"bench\":\"machine\"", 0) == 0) continue;  // printed once
      if (line.rfind("{\"bench\":\"enrichment\"", 0) == 0) {
        auto j = OrderedJson::parse(line);
        j["child_wall_seconds"] = child.wall_seconds;  // the whole child: building the transcript too
        j["child_cpu_seconds"] = child.cpu_seconds;
        j["child_max_rss_mib"] = child.max_rss_mib;
        results.push_back(j);
        continue;
      }
      std::cout << line << "\n";
    }
    if (child.status != 0) {
      std::ifstream e(err);
      std::cerr << "enrichment_speed_benchmark: --hours " << h << " exited with " << child.status << ":\n"
                << e.rdbuf() << "\n";
    }
  }
  fs::remove_all(tmp);

  std::cout << "\n"
            << std::left << std::setw(7) << "hours" << std::right << std::setw(9) << "words" << std::setw(10)
            << "segments" << std::setw(10) << "wall s" << std::setw(9) << "cpu s" << std::setw(9) << "target"
            << std::setw(14) << "RSS transcr." << std::setw(12) << "peak RSS" << std::setw(12) << "JSON KiB"
            << std::setw(12) << "serialize"
            << "\n";
  for (const auto& j : results) {
    std::ostringstream target;
    if (j.contains("target_seconds")) target << "< " << j["target_seconds"].get<double>() << " s";
    std::cout << std::left << std::setw(7) << hours_label(j["hours"].get<double>()) << std::right << std::setw(9)
              << j["words"].get<std::size_t>() << std::setw(10) << j["segments"].get<std::size_t>() << std::fixed
              << std::setprecision(3) << std::setw(10) << j["wall_seconds"].get<double>() << std::setw(9)
              << j["cpu_seconds"].get<double>() << std::setw(9) << target.str() << std::setprecision(1) << std::setw(10)
              << j["rss_transcript_mib"].get<double>() << " MiB" << std::setw(8) << j["peak_rss_mib"].get<double>()
              << " MiB" << std::setw(12) << static_cast<double>(j["artifact_json_bytes"].get<std::size_t>()) / 1024.0
              << std::setw(9) << j["serialize_ms"].get<double>() << " ms\n";
  }
  std::cout << "(wall/cpu: best run of enrich_transcript; RSS transcr.: resident set with the transcript built, "
               "before enriching; peak RSS: ru_maxrss of the size's own process)\n";
  for (const auto& j : results) std::cout << j.dump() << "\n";
  return 0;
}

// --setup-db H: a completed transcription of H hours with its real
// enrichment, made the way the worker makes one (workers/worker.cpp), so the
// read models are the service's own.
int setup_db(double hours) {
  const std::string url = scribe::bench::require_env("SCRIBE_BENCH_DATABASE_URL");
  scribe::configure_object_store(scribe::bench::require_env("SCRIBE_OBJECT_STORE_DIR"));
  auto conn = scribe::db::open_connection(url);
  const scribe::eventstore::EventStore store(scribe::projections::inline_projections());
  const scribe::commands::Meta admin{"admin", ""};
  const std::string tag = std::to_string(::time(nullptr)) + "-" + std::to_string(::getpid());

  // Enterprise: the only plan whose files may last 12 hours (limits::kPlatformMaxFileMinutes).
  const int64_t account = scribe::commands::open_account(store, *conn, "bench-enrich-" + tag + "@bench.invalid",
                                                         scribe::plans::Tier::Enterprise, admin);
  scribe::commands::deposit(store, *conn, account, 100'000'000, "bench", admin);
  const scribe::commands::Caller caller{account, std::nullopt, std::nullopt, admin};
  scribe::transcription::Request req;
  req.source = "upload";
  req.upload_id = "upl_bench" + std::to_string(::getpid());
  req.original_filename = "bench-" + hours_label(hours) + "h.wav";
  req.duration_seconds = hours * 3600.0;
  const int64_t id = scribe::commands::create(store, *conn, caller, req).transcription_id;

  Synthetic s = synthesize(load_passages(), hours);
  tr::TranscriptArtifact& t = s.transcript;
  {
    // Segment ids come from the service's sequence, as the worker draws them: the segments table is shared.
    pqxx::work txn(*conn);
    auto ids = txn.exec_params("select nextval('segment_ids') from generate_series(1, $1::int)",
                               static_cast<int>(t.segments.size()));
    for (std::size_t i = 0; i < t.segments.size(); ++i) t.segments[i].id = ids[static_cast<int>(i)][0].as<int64_t>();
    txn.commit();
  }
  const std::string bytes = tr::to_json(t).dump();
  const std::string digest = scribe::crypto::sha256_hex(bytes);
  const std::string key = tr::artifact_key(id, 1, digest);
  scribe::object_store().put(key, bytes);

  const auto t_enrich = Clock::now();
  const auto enriched = scribe::enrichment::enrich_transcript(t);
  const scribe::Json enrichment_ref = scribe::enrichment::store_artifact(id, 1, enriched);
  const double enrich_s = scribe::bench::seconds_since(t_enrich);

  scribe::commands::Completion done;
  done.duration_seconds = t.duration_seconds;
  done.detected_language = "en";
  done.title = "Synthetic " + hours_label(hours) + "-hour talk";
  done.artifacts = {{"transcript",
                     {{"key", key},
                      {"sha256", digest},
                      {"segments", t.segments.size()},
                      {"words", s.words},
                      {"speakers", t.speakers}}},
                    {"enrichment", enrichment_ref}};
  const auto t_complete = Clock::now();
  if (!scribe::commands::complete_attempt(store, *conn, id, 1, done, {"worker", ""}))
    throw std::runtime_error("complete_attempt refused the attempt");
  const double complete_s = scribe::bench::seconds_since(t_complete);
  std::cerr << std::fixed << std::setprecision(2) << "setup-db: " << hours_label(hours) << " h, " << s.words
            << " words, " << t.segments.size() << " segments, " << enriched.sections.size() << " sections, "
            << enriched.posting.standard.size() << " standard posting items; enrich + store " << enrich_s
            << " s, complete_attempt (inline projections) " << complete_s << " s\n";
  std::cout << account << " " << id << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 2 && args[0] == "--hours") return run_size(std::stod(args[1]));
    if (args.size() == 2 && args[0] == "--setup-db") return setup_db(std::stod(args[1]));
    if (!args.empty()) {
      std::cerr << "usage: enrichment_speed_benchmark [--hours H | --setup-db H]\n";
      return 2;
    }
    return run_all();
  } catch (const std::exception& e) {
    std::cerr << "enrichment_speed_benchmark: " << e.what() << "\n";
    return 1;
  }
}
