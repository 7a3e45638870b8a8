// What the alternates cost (issue 34): pipeline CPU with and without them on
// the same recording, in one run, with Debian's pocketsphinx_continuous on
// the same audio as the same-run reference, and what they add per hour of
// speech (alternates, artifact bytes).
//   alternates_benchmark FILE...      (default: the ask benchmark's report-1..4)
//   SCRIBE_BENCH_RUNS  rounds (3); each round runs off, then on, then the reference
// The pipeline is transcribe() with the service's settings, as a worker runs
// it; only PocketSphinxOptions::alternates differs. Target: CPU +10% at most.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/settings.h"
#include "bench/bench_util.h"
#include "bench/speech_reference.h"
#include "domain/transcript_artifact.h"
#include "speech/pocketsphinx_engine.h"
#include "speech/transcriber.h"

namespace fs = std::filesystem;
using scribe::Json;
using namespace scribe::speech;

namespace {

struct Run {
  double cpu = 0, wall = 0, audio = 0, speech = 0;
  size_t alternates = 0, words = 0, artifact_bytes = 0, alternates_bytes = 0;
};

Run pipeline(EnginePool& pool, const std::vector<std::string>& files, const std::string& work) {
  Run r;
  for (const auto& f : files) {
    std::atomic<bool> cancelled{false};
    const double c0 = scribe::bench::process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    auto out = transcribe(pool, {f, "en", std::nullopt, work}, nullptr, cancelled);
    r.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cpu += scribe::bench::process_cpu_seconds() - c0;
    r.audio += out.duration_seconds;
    r.speech += out.speech_seconds;
    r.alternates += out.alternates.size();
    // The artifact as the worker stores it, with and without its alternates.
    scribe::transcript::TranscriptArtifact a;
    a.duration_seconds = out.duration_seconds;
    a.language = out.language;
    for (const auto& s : out.sentences) {
      scribe::transcript::ArtifactSegment seg;
      seg.start = s.start, seg.end = s.end, seg.text = s.text;
      for (const auto& w : s.words) seg.words.push_back({w.text, w.start, w.end, w.confidence, w.punctuation});
      r.words += s.words.size();
      a.segments.push_back(std::move(seg));
    }
    const size_t without = scribe::transcript::to_json(a).dump().size();
    for (const auto& x : out.alternates) a.alternates.push_back({x.word, x.start, x.end, x.posterior});
    const size_t with = scribe::transcript::to_json(a).dump().size();
    r.artifact_bytes += with;
    r.alternates_bytes += with - without;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) files.push_back(argv[i]);
  if (files.empty())
    for (int i = 1; i <= 4; ++i) files.push_back("/tmp/scribe-enrich-eval/report-" + std::to_string(i) + ".wav");
  for (const auto& f : files)
    if (!fs::exists(f)) {
      std::cerr << f << " is missing (bench/enrichment_eval/make_set.sh makes the default files)\n";
      return 2;
    }
  scribe::bench::machine_info();
  auto settings = scribe::app::load_settings({scribe::app::process_environment(), {}, {}}).settings.pocketsphinx;
  auto off_options = settings;
  off_options.alternates = false;
  settings.alternates = true;
  EnginePool on(std::make_shared<PocketSphinxFactory>(settings));
  EnginePool off(std::make_shared<PocketSphinxFactory>(off_options));
  const std::string work = (fs::temp_directory_path() / ("scribe-alt-bench-" + std::to_string(getpid()))).string();
  fs::create_directories(work);
  const int rounds = std::stoi(scribe::bench::env_or("SCRIBE_BENCH_RUNS", "3"));
  pipeline(off, {files.front()}, work);  // models loaded, caches warm
  pipeline(on, {files.front()}, work);
  std::vector<double> off_cpu, on_cpu, ref_cpu;
  Run last_on;
  for (int k = 0; k < rounds; ++k) {
    const Run a = pipeline(off, files, work);
    const Run b = pipeline(on, files, work);
    const auto ref = scribe::bench::run_speech_reference(files, work);
    off_cpu.push_back(a.cpu / a.audio);
    on_cpu.push_back(b.cpu / b.audio);
    if (ref.ran) ref_cpu.push_back(ref.cpu_seconds / b.audio);
    last_on = b;
    std::cout << "round " << k + 1 << ": CPU s per audio s off " << a.cpu / a.audio << ", on " << b.cpu / b.audio
              << ", reference " << (ref.ran ? ref.cpu_seconds / b.audio : -1) << "\n";
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const double hours = last_on.audio / 3600, speech_hours = last_on.speech / 3600;
  Json j = {{"bench", "alternates"},
            {"files", files.size()},
            {"audio_seconds", last_on.audio},
            {"speech_seconds", last_on.speech},
            {"rounds", rounds},
            {"cpu_per_audio_second_off", median(off_cpu)},
            {"cpu_per_audio_second_on", median(on_cpu)},
            {"cpu_increase", median(on_cpu) / median(off_cpu) - 1},
            {"reference_cpu_per_audio_second", ref_cpu.empty() ? Json(nullptr) : Json(median(ref_cpu))},
            {"on_vs_reference", ref_cpu.empty() ? Json(nullptr) : Json(median(on_cpu) / median(ref_cpu))},
            {"words", last_on.words},
            {"alternates", last_on.alternates},
            {"alternates_per_word", double(last_on.alternates) / std::max<size_t>(1, last_on.words)},
            {"alternates_per_speech_hour", last_on.alternates / speech_hours},
            {"artifact_bytes_per_speech_hour", last_on.artifact_bytes / speech_hours},
            {"alternates_artifact_bytes_per_speech_hour", last_on.alternates_bytes / speech_hours},
            {"audio_hours", hours}};
  std::cout << j.dump() << "\n";
  fs::remove_all(work);
  return 0;
}
