#pragma once
// The recordings of the enrichment benchmarks (bench/enrichment_eval/README.md):
// WORK/NAME.labels (the reference: which passage is where) beside
// WORK/NAME.json (the transcript artifact make_set.sh had scribe transcribe).
// Read by enrichment_quality_benchmark (topic boundaries) and
// title_quality_benchmark (titles); header only, for programs of bench/.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"
#include "domain/transcript_artifact.h"

namespace scribe::bench::enrichment_eval {

namespace fs = std::filesystem;
using scribe::Json;
using scribe::transcript::TranscriptArtifact;

struct Passage {
  double start = 0, end = 0;
  std::string name, voices;
};

// One recording: the transcript (what the segmenter sees) and, apart, the
// reference (what only scoring sees).
struct Recording {
  std::string name, set;
  double duration = 0;
  TranscriptArtifact transcript;
  // Reference, never passed to the segmenter.
  std::vector<Passage> passages;
  std::vector<double> true_times;        // starts of the passages after the first
  std::vector<int> true_segment_labels;  // per transcript segment: the passage it overlaps most
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// WORK/NAME.labels: "# set S recording R duration D", then "passage START END NAME VOICES" lines.
inline Recording load_recording(const fs::path& labels_path) {
  Recording r;
  r.name = labels_path.stem().string();
  std::ifstream in(labels_path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "#") {
      for (std::string key, value; ls >> key >> value;) {
        if (key == "set") r.set = value;
        if (key == "duration") r.duration = std::stod(value);
      }
    } else if (word == "passage") {
      Passage p;
      ls >> p.start >> p.end >> p.name >> p.voices;
      r.passages.push_back(p);
    }
  }
  if (r.passages.empty() || r.set.empty()) throw std::runtime_error(labels_path.string() + ": no set or passages");
  for (std::size_t i = 1; i < r.passages.size(); ++i) r.true_times.push_back(r.passages[i].start);
  r.transcript =
      scribe::transcript::artifact_from_json(Json::parse(read_file(fs::path(labels_path).replace_extension(".json"))));
  if (r.duration <= 0) r.duration = r.transcript.duration_seconds;
  // Each segment's true topic: the passage (with the pause before the next
  // one) it overlaps most, kept non-decreasing.
  int last = 0;
  for (const auto& s : r.transcript.segments) {
    int best = last;
    double best_overlap = -1;
    for (std::size_t p = 0; p < r.passages.size(); ++p) {
      const double from = r.passages[p].start;
      const double to = p + 1 < r.passages.size() ? r.passages[p + 1].start : r.duration + 1e9;
      const double overlap = std::min(to, s.end) - std::max(from, s.start);
      if (overlap > best_overlap) best_overlap = overlap, best = int(p);
    }
    last = std::max(last, best);
    r.true_segment_labels.push_back(last);
  }
  return r;
}

inline std::vector<Recording> load_recordings(const std::string& work, const std::string& only_set) {
  if (!fs::is_directory(work))
    throw std::runtime_error(work + " does not exist: run bench/enrichment_eval/make_set.sh first");
  std::vector<fs::path> labels;
  for (const auto& e : fs::directory_iterator(work))
    if (e.path().extension() == ".labels") labels.push_back(e.path());
  std::sort(labels.begin(), labels.end());
  std::vector<Recording> out;
  for (const auto& p : labels) {
    // The set is in the labels file's first line; read it before the transcript.
    std::ifstream in(p);
    std::string first;
    std::getline(in, first);
    std::istringstream fl(first);
    std::string hash, key, set;
    fl >> hash >> key >> set;
    if (only_set != "all" && set != only_set) continue;
    if (!fs::exists(fs::path(p).replace_extension(".json"))) {
      std::cerr << "skipping " << p.stem().string() << ": no transcript (make_set.sh has not transcribed it)\n";
      continue;
    }
    out.push_back(load_recording(p));
  }
  if (out.empty()) throw std::runtime_error("no transcribed recordings in " + work + " for set " + only_set);
  return out;
}

}  // namespace scribe::bench::enrichment_eval
