// Topic segmentation quality of the enrichment stage
// (enrichment::topic_boundaries) on recordings of known topics: passages of
// our own (bench/enrichment_eval/passages/), one subject each, read by flite
// voices, joined into recordings of 6-10 topics and transcribed by the real
// speech pipeline (bench/enrichment_eval/make_set.sh). A plain program, not a
// Google Benchmark: it prints figures and asserts none of them.
//
// For every recording of the work dir (WORK/NAME.labels + WORK/NAME.json) it
// runs topic_boundaries with SegmentationMethod::kDefault and
// kPlainTextTiling, and a random baseline (as many boundaries as the
// recording has true ones, drawn uniformly without replacement among the
// segment starts, averaged over seeds 1..N of std::mt19937), and prints per
// recording and per set (tune, report):
//   P, R, F1  boundary precision, recall and F1: a predicted boundary (the
//             start time of the segment that starts a topic) is a hit when it
//             is within the tolerance (20 s) of a true boundary, matched one
//             to one (bench/enrichment_eval/segmentation_metrics.h);
//   F1@5      the same F1 with a strict tolerance of 5 s (about one
//             sentence): with topics of about 50 s, a 20 s tolerance
//             accepts most of a topic, and random boundaries score F1 ~0.5;
//   Pk, WD    Pk and WindowDiff over one-second units of the recording by
//             default (each second labelled with the topic in force at its
//             middle), k = half the mean true passage length in seconds;
//             with --units segments over transcript segments instead (each
//             segment's true topic is the passage it overlaps most).
// A set's P/R/F1 are micro averages (hits, predictions and true boundaries
// summed over its recordings); its Pk and WD the mean over its recordings.
// An `oracle` row shows the ceiling the transcript's segmentation allows: the
// true topics moved onto segment starts (each segment given the passage it
// overlaps most).
//
// The reference (labels files) is read only to score: topic_boundaries sees
// the transcript artifact and nothing else.
//
// Modes:
//   (none)         score every recording in the work dir
//   --tune         grid search of SegmentationOptions (axes() below) on the
//                  tune set only (report recordings are not even loaded);
//                  prints the settings ranked by micro F1, then lower
//                  WindowDiff, then their grid neighbours' scores, and the
//                  best one, to be made the default and then reported
//   --self-test    checks the metric functions on hand-computed examples;
//                  exits 1 on a failure
// Options: --work DIR (default $SCRIBE_ENRICH_EVAL_DIR or
// /tmp/scribe-enrich-eval), --set tune|report|all (all), --units
// seconds|segments (seconds), --tolerance SECONDS (20), --strict-tolerance
// SECONDS (5), --seeds N (100), --top N (--tune: how many settings to list,
// 15), --verbose (the predicted and true boundary times of every recording).
// bench/enrichment_eval/README.md has the sets, the metrics and the figures.
// Output: the machine line, tables, and one JSON line per recording, method
// and set ({"bench":"enrichment_quality",...}).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/enrichment_eval/recordings.h"
#include "bench/enrichment_eval/segmentation_metrics.h"
#include "common/json.h"
#include "domain/transcript_artifact.h"
#include "enrichment/segmentation.h"

namespace {

namespace fs = std::filesystem;
namespace seg = scribe::bench::segeval;
using scribe::Json;
using scribe::bench::enrichment_eval::Recording;
using scribe::enrichment::SegmentationMethod;
using scribe::enrichment::SegmentationOptions;
using scribe::transcript::TranscriptArtifact;

enum class Units { kSeconds, kSegments };

struct Settings {
  std::string work = scribe::bench::env_or("SCRIBE_ENRICH_EVAL_DIR", "/tmp/scribe-enrich-eval");
  std::string set = "all";
  Units units = Units::kSeconds;
  double tolerance = 20;
  double strict_tolerance = 5;
  int seeds = 100;
  int top = 15;
  bool verbose = false;
};

// The figures of one row: boundary precision, recall and F1 at the tolerance
// and F1 at the strict tolerance, Pk and WindowDiff.
struct Figures {
  double precision = 0, recall = 0, f1 = 0, f1_strict = 0, pk = 0, window_diff = 0;

  void add(const Figures& o, double weight) {
    precision += o.precision * weight;
    recall += o.recall * weight;
    f1 += o.f1 * weight;
    f1_strict += o.f1_strict * weight;
    pk += o.pk * weight;
    window_diff += o.window_diff * weight;
  }
};

// The scores of one recording under one segmentation.
struct Scores {
  seg::BoundaryScore boundaries, strict;
  Figures fig;
  int k = 0;
  double millis = 0;
  std::vector<double> predicted_times;
};

// A set's: P/R/F1 from the summed counts, Pk and WindowDiff the mean over its recordings.
struct SetScores {
  seg::BoundaryScore boundaries, strict;
  Figures fig;
  double millis = 0;
  int recordings = 0;
};

std::vector<Recording> load_all(const Settings& s, const std::string& only_set) {
  return scribe::bench::enrichment_eval::load_recordings(s.work, only_set);
}

// Scores of segment starts `starts` on recording `r`.
Scores score(const Recording& r, std::vector<int> starts, const Settings& s) {
  const auto& segs = r.transcript.segments;
  const int n = int(segs.size());
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  starts.erase(std::remove_if(starts.begin(), starts.end(), [n](int i) { return i <= 0 || i >= n; }), starts.end());
  Scores sc;
  for (int i : starts) sc.predicted_times.push_back(segs[i].start);
  sc.boundaries = seg::match_boundaries(sc.predicted_times, r.true_times, s.tolerance);
  sc.strict = seg::match_boundaries(sc.predicted_times, r.true_times, s.strict_tolerance);
  std::vector<int> ref, hyp;
  if (s.units == Units::kSeconds) {
    ref = seg::labels_over_time(r.duration, r.true_times);
    hyp = seg::labels_over_time(r.duration, sc.predicted_times);
  } else {
    ref = r.true_segment_labels;
    hyp = seg::labels_from_starts(n, starts);
  }
  sc.k = seg::half_mean_segment_length(ref);
  sc.fig.pk = seg::pk(ref, hyp, sc.k);
  sc.fig.window_diff = seg::window_diff(ref, hyp, sc.k);
  sc.fig.precision = sc.boundaries.precision();
  sc.fig.recall = sc.boundaries.recall();
  sc.fig.f1 = sc.boundaries.f1();
  sc.fig.f1_strict = sc.strict.f1();
  return sc;
}

Scores run_method(const Recording& r, SegmentationMethod m, const SegmentationOptions& o, const Settings& s) {
  const auto t0 = scribe::bench::Clock::now();
  auto starts = scribe::enrichment::topic_boundaries(r.transcript, m, o);
  const double ms = scribe::bench::seconds_since(t0) * 1000;
  auto sc = score(r, std::move(starts), s);
  sc.millis = ms;
  return sc;
}

// Segment starts of the true topics (each segment given the passage it overlaps most).
std::vector<int> oracle_starts(const Recording& r) {
  std::vector<int> starts;
  for (std::size_t i = 1; i < r.true_segment_labels.size(); ++i)
    if (r.true_segment_labels[i] != r.true_segment_labels[i - 1]) starts.push_back(int(i));
  return starts;
}

SetScores summarize(const std::vector<Scores>& per_recording) {
  SetScores t;
  t.recordings = int(per_recording.size());
  for (const auto& sc : per_recording) {
    t.boundaries += sc.boundaries;
    t.strict += sc.strict;
    t.fig.pk += sc.fig.pk / t.recordings;
    t.fig.window_diff += sc.fig.window_diff / t.recordings;
    t.millis += sc.millis;
  }
  t.fig.precision = t.boundaries.precision();
  t.fig.recall = t.boundaries.recall();
  t.fig.f1 = t.boundaries.f1();
  t.fig.f1_strict = t.strict.f1();
  return t;
}

// The random baseline of a group of recordings: each figure per recording and
// for the group, the mean over seeds 1..N (the same seeds for every recording).
struct RandomScores {
  std::vector<Figures> per_recording;
  Figures set;
};

RandomScores random_baseline(const std::vector<const Recording*>& recs, const Settings& s) {
  RandomScores out;
  out.per_recording.resize(recs.size());
  const double weight = 1.0 / s.seeds;
  for (int seed = 1; seed <= s.seeds; ++seed) {
    std::vector<Scores> this_seed;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      seg::Draws draws(static_cast<std::uint32_t>(seed));
      const auto& r = *recs[i];
      auto sc = score(r, draws.distinct(int(r.true_times.size()), 1, int(r.transcript.segments.size())), s);
      out.per_recording[i].add(sc.fig, weight);
      this_seed.push_back(std::move(sc));
    }
    out.set.add(summarize(this_seed).fig, weight);
  }
  return out;
}

std::string fixed(double v, int digits = 3) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

double round3(double v) { return std::round(v * 1000) / 1000; }

std::string times_list(const std::vector<double>& t) {
  std::string out;
  for (double v : t) out += (out.empty() ? "" : " ") + fixed(v, 1);
  return out;
}

const char* units_name(Units u) { return u == Units::kSeconds ? "seconds" : "segments"; }

void print_header(const std::string& first, const Settings& s) {
  std::cout << std::left << std::setw(12) << first << std::setw(18) << "method" << std::right << std::setw(7) << "P"
            << std::setw(7) << "R" << std::setw(7) << "F1" << std::setw(8) << ("F1@" + fixed(s.strict_tolerance, 0))
            << std::setw(7) << "Pk" << std::setw(7) << "WD"
            << "  " << std::left << std::setw(16) << "hits/pred/true"
            << "notes\n";
}

void print_row(const std::string& label, const std::string& method, const Figures& f, const std::string& counts,
               const std::string& notes) {
  std::cout << std::left << std::setw(12) << label << std::setw(18) << method << std::right << std::setw(7)
            << fixed(f.precision) << std::setw(7) << fixed(f.recall) << std::setw(7) << fixed(f.f1) << std::setw(8)
            << fixed(f.f1_strict) << std::setw(7) << fixed(f.pk) << std::setw(7) << fixed(f.window_diff) << "  "
            << std::left << std::setw(16) << counts << notes << "\n";
}

Json figures_json(const std::string& scope, const std::string& name, const std::string& set, const std::string& method,
                  const Figures& f, const Settings& s) {
  return Json{{"bench", "enrichment_quality"},
              {"scope", scope},
              {"name", name},
              {"set", set},
              {"method", method},
              {"precision", round3(f.precision)},
              {"recall", round3(f.recall)},
              {"f1", round3(f.f1)},
              {"f1_strict", round3(f.f1_strict)},
              {"pk", round3(f.pk)},
              {"window_diff", round3(f.window_diff)},
              {"units", units_name(s.units)},
              {"tolerance_seconds", s.tolerance},
              {"strict_tolerance_seconds", s.strict_tolerance}};
}

void add_counts(Json& j, const seg::BoundaryScore& b) {
  j["hits"] = b.hits;
  j["predicted"] = b.predicted;
  j["true"] = b.reference;
}

struct Method {
  std::string name;
  SegmentationMethod method;
};

const std::vector<Method>& methods() {
  static const std::vector<Method> m = {{"default", SegmentationMethod::kDefault},
                                        {"plain-texttiling", SegmentationMethod::kPlainTextTiling}};
  return m;
}

std::string counts(const seg::BoundaryScore& b) {
  return std::to_string(b.hits) + "/" + std::to_string(b.predicted) + "/" + std::to_string(b.reference);
}

int evaluate(const Settings& s) {
  const auto recs = load_all(s, s.set);
  std::cout << "topic segmentation quality: work dir " << s.work << "; boundary hits within " << s.tolerance
            << " s (F1@" << s.strict_tolerance << ": within " << s.strict_tolerance
            << " s), one to one; Pk and WindowDiff over " << units_name(s.units)
            << ", k = half the mean true topic length; random: as many boundaries as true ones, mean of " << s.seeds
            << " seeds\n\n";
  std::vector<Json> json;
  // The sets in the order tune, report, then any other by name.
  auto set_order = [](const std::string& a, const std::string& b) {
    auto rank = [](const std::string& n) { return n == "tune" ? 0 : n == "report" ? 1 : 2; };
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  };
  std::map<std::string, std::vector<const Recording*>, decltype(set_order)> by_set(set_order);
  for (const auto& r : recs) by_set[r.set].push_back(&r);
  std::map<std::string, std::map<std::string, std::vector<Scores>>> table;  // set -> method -> per recording
  std::map<std::string, RandomScores> random;
  print_header("recording", s);
  for (const auto& [set, group] : by_set) {
    random[set] = random_baseline(group, s);
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Recording& r = *group[i];
      const auto oracle = score(r, oracle_starts(r), s);
      std::cout << r.name << " (" << set << ", " << fixed(r.duration / 60, 1) << " min, " << r.passages.size()
                << " topics, " << r.transcript.segments.size() << " segments, k " << oracle.k << ")\n";
      for (const auto& m : methods()) {
        auto sc = run_method(r, m.method, SegmentationOptions{}, s);
        print_row("", m.name, sc.fig, counts(sc.boundaries), fixed(sc.millis, 1) + " ms");
        if (s.verbose) std::cout << "              at " << times_list(sc.predicted_times) << "\n";
        auto j = figures_json("recording", r.name, set, m.name, sc.fig, s);
        add_counts(j, sc.boundaries);
        j["millis"] = round3(sc.millis);
        json.push_back(j);
        table[set][m.name].push_back(std::move(sc));
      }
      print_row("", "random", random[set].per_recording[i], "", "mean of seeds");
      json.push_back(figures_json("recording", r.name, set, "random", random[set].per_recording[i], s));
      print_row("", "oracle", oracle.fig, counts(oracle.boundaries), "true topics on segment starts");
      if (s.verbose) std::cout << "              true " << times_list(r.true_times) << "\n";
      table[set]["oracle"].push_back(oracle);
    }
  }
  std::cout << "\nper set: P/R/F1 from the hits, predictions and true boundaries summed over the set, Pk/WD the mean\n";
  print_header("set", s);
  for (const auto& [set, group] : by_set) {
    const std::string label = set + " (" + std::to_string(group.size()) + ")";
    for (const auto& m : methods()) {
      const auto t = summarize(table[set][m.name]);
      print_row(label, m.name, t.fig, counts(t.boundaries),
                fixed(t.millis / std::max(1, t.recordings), 1) + " ms per recording");
      auto j = figures_json("set", set, set, m.name, t.fig, s);
      add_counts(j, t.boundaries);
      j["recordings"] = t.recordings;
      json.push_back(j);
    }
    print_row(label, "random", random[set].set, "", "mean of " + std::to_string(s.seeds) + " seeds");
    auto j = figures_json("set", set, set, "random", random[set].set, s);
    j["recordings"] = int(group.size());
    j["seeds"] = s.seeds;
    json.push_back(j);
    const auto o = summarize(table[set]["oracle"]);
    print_row(label, "oracle", o.fig, counts(o.boundaries), "the ceiling the segments allow");
  }
  std::cout << "\n";
  for (const auto& j : json) std::cout << j.dump() << "\n";
  return 0;
}

// --tune: the grid of SegmentationOptions searched on the tune set. Each entry
// names the settings it changes from the defaults.
struct Candidate {
  SegmentationOptions options;
  std::string description;
};

// One tunable of the default method and the values tried.
struct Axis {
  std::string name;
  std::vector<double> values;
  double (*get)(const SegmentationOptions&);
  void (*set)(SegmentationOptions&, double);
};

// The grid --tune searches (relative_depth, min_section_segments and
// max_sections stay at their defaults; min_depth is in the units
// relative_depth gives it).
const std::vector<Axis>& axes() {
  static const std::vector<Axis> a = {
      {"window_tokens",
       {30, 40, 50, 70},
       [](const SegmentationOptions& o) { return double(o.window_tokens); },
       [](SegmentationOptions& o, double v) { o.window_tokens = int(v); }},
      {"smoothing_radius",
       {0, 1, 2},
       [](const SegmentationOptions& o) { return double(o.smoothing_radius); },
       [](SegmentationOptions& o, double v) { o.smoothing_radius = int(v); }},
      {"depth_cutoff_sd",
       {0, 0.5, 1, 1.5},
       [](const SegmentationOptions& o) { return o.depth_cutoff_sd; },
       [](SegmentationOptions& o, double v) { o.depth_cutoff_sd = v; }},
      {"min_depth",
       {0.2, 0.3, 0.4, 0.5, 0.6},
       [](const SegmentationOptions& o) { return o.min_depth; },
       [](SegmentationOptions& o, double v) { o.min_depth = v; }},
      {"min_section_seconds",
       {20, 30, 45},
       [](const SegmentationOptions& o) { return o.min_section_seconds; },
       [](SegmentationOptions& o, double v) { o.min_section_seconds = v; }},
      {"refine_radius",
       {0, 2, 3, 5},
       [](const SegmentationOptions& o) { return double(o.refine_radius); },
       [](SegmentationOptions& o, double v) { o.refine_radius = int(v); }},
  };
  return a;
}

// The values tried along `axis`: its list plus the current default's value.
std::vector<double> axis_values(const Axis& axis) {
  std::vector<double> v = axis.values;
  v.push_back(axis.get(SegmentationOptions{}));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The searched options' values in `o`.
std::string describe(const SegmentationOptions& o) {
  std::ostringstream d;
  for (const auto& axis : axes()) d << (&axis == &axes().front() ? "" : " ") << axis.name << "=" << axis.get(o);
  return d.str();
}

// Every combination of the axes' values (the first axis varying slowest), the
// other options at their defaults.
std::vector<Candidate> grid() {
  std::vector<Candidate> out = {{SegmentationOptions{}, ""}};
  for (const auto& axis : axes()) {
    std::vector<Candidate> next;
    for (const auto& c : out)
      for (double v : axis_values(axis)) {
        Candidate n = c;
        axis.set(n.options, v);
        std::ostringstream d;
        d << c.description << (c.description.empty() ? "" : " ") << axis.name << "=" << v;
        n.description = d.str();
        next.push_back(std::move(n));
      }
    out = std::move(next);
  }
  return out;
}

// The indices of the grid points one step from `index` along one axis
// (grid() lists the points with the first axis varying slowest).
std::vector<std::size_t> neighbours(std::size_t index) {
  std::vector<std::size_t> out;
  std::size_t stride = 1;
  for (auto axis = axes().rbegin(); axis != axes().rend(); ++axis) {
    const std::size_t n = axis_values(*axis).size();
    const std::size_t coord = (index / stride) % n;
    if (coord > 0) out.push_back(index - stride);
    if (coord + 1 < n) out.push_back(index + stride);
    stride *= n;
  }
  return out;
}

int tune(const Settings& s) {
  const auto recs = load_all(s, "tune");
  std::cout << "tuning on the tune set only (" << recs.size() << " recordings), tolerance " << s.tolerance
            << " s, Pk/WD over " << units_name(s.units)
            << "; ranked by micro F1, then lower WindowDiff, then the mean F1 and WindowDiff of the setting's\n"
               "neighbours in the grid (one step along one axis: a setting on a plateau before a lone peak)\n";
  struct Result {
    SetScores t;
    std::string description;
    double neighbour_f1 = 0, neighbour_wd = 0;
  };
  std::vector<Result> results;
  auto run = [&](const SegmentationOptions& o) {
    std::vector<Scores> per;
    for (const auto& r : recs) per.push_back(run_method(r, SegmentationMethod::kDefault, o, s));
    return summarize(per);
  };
  const auto defaults = run(SegmentationOptions{});
  const auto candidates = grid();
  for (const auto& c : candidates) results.push_back({run(c.options), c.description});
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto near = neighbours(i);
    for (auto j : near) {
      results[i].neighbour_f1 += results[j].t.fig.f1 / double(near.size());
      results[i].neighbour_wd += results[j].t.fig.window_diff / double(near.size());
    }
  }
  std::stable_sort(results.begin(), results.end(), [](const Result& a, const Result& b) {
    if (a.t.fig.f1 != b.t.fig.f1) return a.t.fig.f1 > b.t.fig.f1;
    if (a.t.fig.window_diff != b.t.fig.window_diff) return a.t.fig.window_diff < b.t.fig.window_diff;
    if (a.neighbour_f1 != b.neighbour_f1) return a.neighbour_f1 > b.neighbour_f1;
    return a.neighbour_wd < b.neighbour_wd;
  });
  std::cout << candidates.size() << " settings\n\n";
  print_header("rank", s);
  print_row("now", "default", defaults.fig, counts(defaults.boundaries),
            describe(SegmentationOptions{}) + " (the current defaults)");
  for (std::size_t i = 0; i < results.size() && int(i) < s.top; ++i) {
    const auto& r = results[i];
    print_row(std::to_string(i + 1), "default", r.t.fig, counts(r.t.boundaries),
              r.description + " (neighbours F1 " + fixed(r.neighbour_f1) + " WD " + fixed(r.neighbour_wd) + ")");
  }
  if (!results.empty()) {
    const auto& best = results.front();
    std::cout << "\nbest on tune: " << best.description << "\n";
    auto j = figures_json("tune", "best", "tune", "default", best.t.fig, s);
    add_counts(j, best.t.boundaries);
    j["options"] = best.description;
    j["neighbour_f1"] = round3(best.neighbour_f1);
    j["neighbour_window_diff"] = round3(best.neighbour_wd);
    j["settings_searched"] = candidates.size();
    j["defaults"] = describe(SegmentationOptions{});
    j["defaults_f1"] = round3(defaults.fig.f1);
    j["defaults_window_diff"] = round3(defaults.fig.window_diff);
    std::cout << j.dump() << "\n";
  }
  return 0;
}

// --self-test: the metrics on examples worked out by hand.
int self_test() {
  int passed = 0, failed = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAILED: " << what << "\n";
    }
  };
  auto near = [](double a, double b) { return std::abs(a - b) < 1e-9; };

  // Boundary matching.
  {
    auto b = seg::match_boundaries({60, 120, 180}, {60, 120, 180}, 20);
    check(b.hits == 3 && near(b.f1(), 1), "identical boundaries: F1 1");
    b = seg::match_boundaries({10, 50, 95}, {30, 60, 100}, 20);
    check(b.hits == 3, "offsets of 20, 10 and 5 s are all hits at tolerance 20");
    b = seg::match_boundaries({55, 58}, {60}, 20);
    check(b.hits == 1 && near(b.precision(), 0.5) && near(b.recall(), 1) && near(b.f1(), 2.0 / 3),
          "two predictions near one true boundary: one hit (one to one), P 0.5, R 1, F1 2/3");
    // Nearest-first would pair 60 with 50 and leave 35 and 75 alone (1 hit);
    // the maximum matching pairs 35-50 and 60-75.
    b = seg::match_boundaries({60, 35}, {75, 50}, 20);
    check(b.hits == 2, "maximum matching, not nearest-first: 2 hits");
    b = seg::match_boundaries({100}, {70, 130}, 20);
    check(b.hits == 0 && near(b.f1(), 0), "30 s away on both sides: no hit");
    b = seg::match_boundaries({}, {60}, 20);
    check(near(b.precision(), 0) && near(b.recall(), 0) && near(b.f1(), 0), "nothing predicted: P R F1 0");
    b = seg::match_boundaries({}, {}, 20);
    check(near(b.f1(), 1), "nothing to find, nothing predicted: F1 1");
    b = seg::match_boundaries({10, 40, 70, 100}, {40, 100}, 5);
    check(b.hits == 2 && near(b.precision(), 0.5) && near(b.recall(), 1), "two extra predictions: P 0.5, R 1");
    seg::BoundaryScore sum;
    sum += seg::match_boundaries({10}, {10}, 1);
    sum += seg::match_boundaries({50, 90}, {70}, 1);
    check(sum.hits == 1 && sum.predicted == 3 && sum.reference == 2, "micro sums");
  }
  // Labels.
  {
    check(seg::labels_from_starts(6, {2, 4}) == std::vector<int>({0, 0, 1, 1, 2, 2}), "labels from starts");
    check(seg::labels_from_starts(4, {0, 2, 2, 9}) == std::vector<int>({0, 0, 1, 1}),
          "labels ignore 0, duplicates and out of range");
    check(seg::labels_over_time(5.0, {2.0}) == std::vector<int>({0, 0, 1, 1, 1}), "labels over seconds");
    check(seg::labels_over_time(4.2, {1.4}) == std::vector<int>({0, 1, 1, 1, 1}),
          "a second belongs to the topic at its middle; a partial last second counts");
    check(seg::half_mean_segment_length({0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}) == 3, "k: 12 units, 2 topics -> 3");
    check(seg::half_mean_segment_length({0, 0, 0}) == 2, "k: 3 units, 1 topic -> 1.5 rounds to 2");
  }
  // Pk and WindowDiff.
  {
    const std::vector<int> ref = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    check(near(seg::pk(ref, ref, 2), 0) && near(seg::window_diff(ref, ref, 2), 0), "perfect: Pk 0, WD 0");
    // Boundary predicted 2 units late, k = 2: windows i = 3, 4 (the reference
    // differs) and i = 5, 6 (the hypothesis differs) of 8 disagree.
    const std::vector<int> late = {0, 0, 0, 0, 0, 0, 0, 1, 1, 1};
    check(near(seg::pk(ref, late, 2), 0.5), "boundary 2 units late, k 2: Pk 4/8");
    check(near(seg::window_diff(ref, late, 2), 0.5), "boundary 2 units late, k 2: WD 4/8");
    // No boundary at all: only the windows across the true one (i = 3, 4) are wrong.
    const std::vector<int> none(10, 0);
    check(near(seg::pk(ref, none, 2), 0.25), "no boundaries, k 2: Pk 2/8");
    // A boundary after every unit: every window says "different", wrong
    // everywhere except i = 3, 4.
    const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    check(near(seg::pk(ref, all, 2), 0.75), "a boundary everywhere, k 2: Pk 6/8");
    check(near(seg::window_diff(ref, all, 2), 1.0), "a boundary everywhere, k 2: WD 8/8");
    // Where they differ: an extra boundary next to the true one. Reference
    // 00001111, hypothesis 00012222, k 3, windows i = 0..4: Pk errs only at
    // i = 0 (1/5); WindowDiff also counts i = 1, 2, where the hypothesis has
    // two boundaries and the reference one (3/5).
    const std::vector<int> r2 = {0, 0, 0, 0, 1, 1, 1, 1};
    const std::vector<int> h2 = {0, 0, 0, 1, 2, 2, 2, 2};
    check(near(seg::pk(r2, h2, 3), 0.2), "near miss plus hit, k 3: Pk 1/5");
    check(near(seg::window_diff(r2, h2, 3), 0.6), "near miss plus hit, k 3: WD 3/5");
    check(near(seg::pk(ref, late, 20), 0), "window longer than the text: 0");
  }
  // Random draws.
  {
    seg::Draws a(7), b(7);
    const auto x = a.distinct(5, 1, 40), y = b.distinct(5, 1, 40);
    bool in_range = x.size() == 5 && std::adjacent_find(x.begin(), x.end()) == x.end();
    for (int v : x) in_range = in_range && v >= 1 && v < 40;
    check(x == y && in_range, "random draws: 5 distinct in [1, 40), the same for the same seed");
    check(seg::Draws(3).distinct(10, 1, 4) == std::vector<int>({1, 2, 3}), "random draws: a small range gives all");
    std::vector<int> hist(4, 0);
    seg::Draws c(11);
    for (int i = 0; i < 40000; ++i) ++hist[c.below(4)];
    bool flat = true;
    for (int h : hist) flat = flat && std::abs(h - 10000) < 500;
    check(flat, "random draws: below(4) is about uniform");
  }
  std::cout << "self-test: " << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

int usage(int code) {
  std::cout << "usage: enrichment_quality_benchmark [--work DIR] [--set tune|report|all] [--units seconds|segments]\n"
               "                                    [--tolerance SECONDS] [--strict-tolerance SECONDS] [--seeds N]\n"
               "                                    [--verbose]\n"
               "       enrichment_quality_benchmark --tune [--work DIR] [--top N] [--units ...] [--tolerance ...]\n"
               "       enrichment_quality_benchmark --self-test\n"
               "Build the recordings first: bench/enrichment_eval/make_set.sh [DIR]\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  std::string mode = "evaluate";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--tune") {
        mode = "tune";
      } else if (a == "--self-test") {
        mode = "self-test";
      } else if (a == "--work") {
        s.work = value();
      } else if (a == "--set") {
        s.set = value();
      } else if (a == "--units") {
        const auto u = value();
        if (u != "seconds" && u != "segments") throw std::runtime_error("--units seconds|segments");
        s.units = u == "seconds" ? Units::kSeconds : Units::kSegments;
      } else if (a == "--tolerance") {
        s.tolerance = std::stod(value());
      } else if (a == "--strict-tolerance") {
        s.strict_tolerance = std::stod(value());
      } else if (a == "--seeds") {
        s.seeds = std::max(1, std::stoi(value()));
      } else if (a == "--top") {
        s.top = std::stoi(value());
      } else if (a == "--verbose") {
        s.verbose = true;
      } else if (a == "--help" || a == "-h") {
        return usage(0);
      } else {
        std::cerr << "unknown argument " << a << "\n";
        return usage(2);
      }
    }
    if (mode == "self-test") return self_test();
    scribe::bench::machine_info();
    return mode == "tune" ? tune(s) : evaluate(s);
  } catch (const std::exception& e) {
    std::cerr << "enrichment_quality_benchmark: " << e.what() << "\n";
    return 1;
  }
}
