// Title quality of the enrichment stage: does a section's title name what
// the section is about? On the topic segmentation benchmark's recordings
// (bench/enrichment_eval/, passages of our own read by flite voices and
// transcribed by the real pipeline), each title is compared with the
// reference title written by hand for its passage
// (bench/enrichment_eval/reference_titles.tsv). A plain program: it prints
// figures and asserts none of them.
//
// A title "shares its head noun" with the reference when one of its heads,
// in WordNet's base form, is one of the reference's heads. A title's heads
// are the last word of each of its parts, the parts being what is left
// between the small words ("and", "of", "the", "in", ...): "Sourdough
// Starter" has the head "starter", "Plate and Salt" the heads "plate" and
// "salt" (so a pair gets two chances, which favours the titles of before).
//
// Titles are scored three ways, each under several labelling options
// (enrichment::LabelOptions: "before" is everything off, as the titles were
// made before WordNet and confidences were used):
//   passages  the titles of the true passages (segments grouped by the
//             passage they overlap most) as sections: titling alone, with
//             segmentation out of the way;
//   sections  enrich()'s sections, each compared with the passage it
//             overlaps most;
//   chapters  enrich()'s chapters, the same way.
// and for each: the share sharing a head noun ("head"), the share whose
// first head is one of the reference's ("head1": one chance per title, pair
// or phrase), the share holding a word the passage never says ("mish":
// the recognizer misheard it; the passage's text, like the references, is
// read only to score), the share that are two
// keyphrases joined by "and", and the share whose first head WordNet knows
// as a noun (the share of its senses that are nouns at least 0.5).
//
// Modes: (none) every set; --set tune|report; --tune: a grid of
// LabelOptions on the tune set only (the report set is not even loaded),
// ranked by the passages' head1 share, then the fewest faults (the pairs'
// share plus twice the misheard share: a title with a wrong word is worse
// than two right ones joined), then the head
// share ("head" alone would always prefer pairs, which get two chances);
// --verbose: every title beside its reference.
// Options: --work DIR (default $SCRIBE_ENRICH_EVAL_DIR or
// /tmp/scribe-enrich-eval), --references FILE (default
// bench/enrichment_eval/reference_titles.tsv).
// The references are read only to score: enrich() sees the transcript.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/enrichment_eval/recordings.h"
#include "common/text.h"
#include "enrichment/corpus.h"
#include "enrichment/enricher.h"
#include "enrichment/structure.h"
#include "lexicon/wordnet.h"

namespace {

namespace ee = scribe::bench::enrichment_eval;
namespace en = scribe::enrichment;
namespace lx = scribe::lexicon;

struct Reference {
  std::string title;
  std::vector<std::string> heads;  // base forms
  std::set<std::string> said;      // the passage's words as written, lower case, and their noun base forms
};

std::string noun_base(const std::string& word) {
  const auto bases = lx::base_forms(word, lx::Pos::noun);
  return bases.empty() ? word : bases.front();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  return out;
}

std::set<std::string> words_of_passage(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name + ".txt");
  if (!in) throw std::runtime_error("cannot read passage " + dir + "/" + name + ".txt");
  std::set<std::string> out;
  std::string word;
  for (char c; in.get(c);) {
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '\'') {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.insert(word);
      out.insert(noun_base(word));
      word.clear();
    }
  }
  if (!word.empty()) out.insert(word), out.insert(noun_base(word));
  return out;
}

std::map<std::string, Reference> load_references(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::map<std::string, Reference> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto cols = split(line, '\t');
    if (cols.size() != 3) throw std::runtime_error(path + ": not PASSAGE<TAB>TITLE<TAB>HEADS: " + line);
    Reference r{cols[1], {}, {}};
    for (const auto& h : split(cols[2], '|')) r.heads.push_back(noun_base(h));
    const std::string dir = path.substr(0, path.find_last_of('/') + 1) + "passages";
    r.said = words_of_passage(dir, cols[0]);
    out[cols[0]] = r;
  }
  return out;
}

bool is_small(const std::string& w) {
  static const std::set<std::string> small = {"and",  "of", "the", "a",    "an", "in", "on",   "for",
                                              "with", "at", "to",  "from", "by", "&",  "part", "notes"};
  return small.count(w) > 0;
}

// The last word of each part between small words, lower case, base form;
// numbers ("Part 3") are no heads.
std::vector<std::string> title_heads(const std::string& title) {
  std::vector<std::string> heads;
  std::string last;
  auto close = [&] {
    if (!last.empty() && !std::all_of(last.begin(), last.end(), ::isdigit)) heads.push_back(noun_base(last));
    last.clear();
  };
  for (const auto& raw : split(title, ' ')) {
    std::string w = scribe::to_lower(raw);
    w.erase(std::remove_if(w.begin(), w.end(), [](char c) { return c == ',' || c == ':' || c == '.'; }), w.end());
    if (w.empty()) continue;
    if (is_small(w)) {
      close();
    } else {
      // "Sourdough-Starter": the part after the last hyphen heads it.
      const auto dash = w.rfind('-');
      last = dash == std::string::npos ? w : w.substr(dash + 1);
    }
  }
  close();
  return heads;
}

struct Tally {
  int titles = 0, shared = 0, first_shared = 0, pairs = 0, noun_heads = 0, misheard = 0;
  void add(const Tally& o) {
    titles += o.titles, shared += o.shared, first_shared += o.first_shared, pairs += o.pairs,
        noun_heads += o.noun_heads, misheard += o.misheard;
  }
  double share(int n) const { return titles ? static_cast<double>(n) / titles : 0; }
};

struct Scored {
  Tally passages, sections, chapters;
};

// Scores one title against the reference of passage `name`.
void score_title(const std::string& title, const std::string& name, const std::map<std::string, Reference>& refs,
                 Tally& t, bool verbose, const char* kind) {
  const auto it = refs.find(name);
  if (it == refs.end()) throw std::runtime_error("no reference title for passage " + name);
  const auto heads = title_heads(title);
  const bool shared = std::any_of(heads.begin(), heads.end(), [&](const std::string& h) {
    return std::find(it->second.heads.begin(), it->second.heads.end(), h) != it->second.heads.end();
  });
  const auto& ref_heads = it->second.heads;
  const bool first_shared =
      !heads.empty() && std::find(ref_heads.begin(), ref_heads.end(), heads.front()) != ref_heads.end();
  const bool pair = (" " + scribe::to_lower(title) + " ").find(" and ") != std::string::npos;
  // A word of the title the passage never says: the recognizer misheard it.
  bool misheard = false;
  for (const auto& raw : split(title, ' ')) {
    std::string w = scribe::to_lower(raw);
    w.erase(
        std::remove_if(w.begin(), w.end(),
                       [](char c) { return !std::isalpha(static_cast<unsigned char>(c)) && c != '\'' && c != '-'; }),
        w.end());
    if (w.empty() || is_small(w)) continue;
    for (const auto& part : split(w, '-'))
      if (!part.empty() && !it->second.said.count(part) && !it->second.said.count(noun_base(part))) misheard = true;
  }
  const bool noun = !heads.empty() && lx::pos_share(heads.front(), lx::Pos::noun) >= 0.5;
  ++t.titles;
  t.shared += shared;
  t.first_shared += first_shared;
  t.misheard += misheard;
  t.pairs += pair;
  t.noun_heads += noun;
  if (verbose)
    std::printf("    %-9s %-40s %-28s %s%s\n", kind, title.c_str(), it->second.title.c_str(), shared ? "shared" : "-",
                misheard ? " misheard" : "");
}

// The passage a stretch [start, end) of seconds overlaps most.
std::size_t passage_at(const ee::Recording& r, double start, double end) {
  std::size_t best = 0;
  double best_overlap = -1e18;
  for (std::size_t p = 0; p < r.passages.size(); ++p) {
    const double from = r.passages[p].start;
    const double to = p + 1 < r.passages.size() ? r.passages[p + 1].start : r.duration + 1e9;
    const double overlap = std::min(to, end) - std::max(from, start);
    if (overlap > best_overlap) best_overlap = overlap, best = p;
  }
  return best;
}

Scored score_recording(const ee::Recording& r, const en::LabelOptions& labeling,
                       const std::map<std::string, Reference>& refs, bool verbose) {
  Scored s;
  // The true passages as sections: consecutive segments with the same passage.
  const en::Corpus corpus(r.transcript, labeling);
  std::vector<en::Span> spans;
  std::vector<int> passage_of_span;
  const auto& labels = r.true_segment_labels;
  for (int i = 0; i < static_cast<int>(labels.size()); ++i) {
    if (i == 0 || labels[i] != labels[i - 1]) {
      spans.push_back({i, i + 1});
      passage_of_span.push_back(labels[i]);
    } else {
      spans.back().end = i + 1;
    }
  }
  const auto labelled = en::label_spans(corpus, spans, en::Timing::kSegments, en::Steering{},
                                        en::LabelStyle{2, 300, en::TitleShape::kPhrase});
  if (verbose) std::printf("  %s\n", r.name.c_str());
  for (std::size_t i = 0; i < labelled.size(); ++i)
    score_title(labelled[i].title, r.passages[passage_of_span[i]].name, refs, s.passages, verbose, "passage");

  en::EnrichOptions o;
  o.labeling = labeling;
  const auto a = en::enrich(r.transcript, o);
  for (const auto& sec : a.sections)
    score_title(sec.title, r.passages[passage_at(r, sec.start, sec.end)].name, refs, s.sections, verbose, "section");
  for (const auto& ch : a.chapters)
    score_title(ch.title, r.passages[passage_at(r, ch.start, ch.end)].name, refs, s.chapters, verbose, "chapter");
  return s;
}

Scored score_set(const std::vector<ee::Recording>& recs, const std::string& set, const en::LabelOptions& labeling,
                 const std::map<std::string, Reference>& refs, bool verbose) {
  Scored total;
  for (const auto& r : recs) {
    if (r.set != set) continue;
    const Scored s = score_recording(r, labeling, refs, verbose);
    total.passages.add(s.passages);
    total.sections.add(s.sections);
    total.chapters.add(s.chapters);
  }
  return total;
}

en::LabelOptions before() {
  en::LabelOptions o;
  o.parts_of_speech = false;
  o.confidence = false;
  o.phrase_share = 2;
  return o;
}

void print_row(const std::string& set, const std::string& name, const Scored& s) {
  auto cell = [](const Tally& t) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%3d %5.3f %5.3f %5.3f %5.3f %5.3f", t.titles, t.share(t.shared),
                  t.share(t.first_shared), t.share(t.pairs), t.share(t.noun_heads), t.share(t.misheard));
    return std::string(buf);
  };
  std::printf("%-7s %-22s | %s | %s | %s\n", set.c_str(), name.c_str(), cell(s.passages).c_str(),
              cell(s.sections).c_str(), cell(s.chapters).c_str());
  const auto js = [](const Tally& t) {
    return scribe::Json{{"titles", t.titles},
                        {"head_noun_shared", t.share(t.shared)},
                        {"first_head_shared", t.share(t.first_shared)},
                        {"pairs", t.share(t.pairs)},
                        {"noun_heads", t.share(t.noun_heads)},
                        {"misheard", t.share(t.misheard)}};
  };
  std::cout << scribe::Json{{"bench", "title_quality"},
                            {"set", set},
                            {"options", name},
                            {"passages", js(s.passages)},
                            {"sections", js(s.sections)},
                            {"chapters", js(s.chapters)}}
                   .dump()
            << "\n";
}

void print_header() {
  std::printf("%-7s %-22s | %-33s | %-33s | %-33s\n", "set", "options", "passages: n head head1 pair noun mish",
              "sections", "chapters");
}

}  // namespace

int main(int argc, char** argv) {
  std::string work = scribe::bench::env_or("SCRIBE_ENRICH_EVAL_DIR", "/tmp/scribe-enrich-eval");
  std::string references = "bench/enrichment_eval/reference_titles.tsv";
  std::string only = "all";
  bool tune = false, verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--work" && i + 1 < argc) work = argv[++i];
    else if (a == "--references" && i + 1 < argc) references = argv[++i];
    else if (a == "--set" && i + 1 < argc) only = argv[++i];
    else if (a == "--tune") tune = true;
    else if (a == "--verbose") verbose = true;
    else {
      std::cerr << "usage: title_quality_benchmark [--work DIR] [--references FILE] [--set tune|report] [--tune] "
                   "[--verbose]\n";
      return 2;
    }
  }
  try {
    scribe::bench::machine_info();
    if (!lx::wordnet_available()) throw std::runtime_error("WordNet is not readable (Debian's wordnet-base)");
    const auto refs = load_references(references);
    const auto recs = ee::load_recordings(work, tune ? "tune" : only);
    print_header();
    if (tune) {
      struct Row {
        double passages, first, pairs, misheard;
        std::string name;
      };
      std::vector<Row> rows;
      const Scored b = score_set(recs, "tune", before(), refs, false);
      print_row("tune", "before", b);
      for (const double floor : {0.1, 0.3, 0.5})
        for (const double sure : {0.0, 0.4, 0.6, 0.8})
          for (const double share : {0.3, 0.5, 0.7, 2.0}) {
            en::LabelOptions o;
            o.noun_floor = floor;
            o.sure_confidence = sure;
            o.confidence = sure > 0;
            o.phrase_share = share;
            char name[64];
            std::snprintf(name, sizeof name, "floor%.1f sure%.1f share%.1f", floor, sure, share);
            const Scored s = score_set(recs, "tune", o, refs, false);
            print_row("tune", name, s);
            rows.push_back({s.passages.share(s.passages.shared), s.passages.share(s.passages.first_shared),
                            s.passages.share(s.passages.pairs), s.passages.share(s.passages.misheard), name});
          }
      std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
        if (x.first != y.first) return x.first > y.first;
        // A title with a wrong word is worse than two right ones joined.
        const double fx = x.pairs + 2 * x.misheard, fy = y.pairs + 2 * y.misheard;
        if (fx != fy) return fx < fy;
        return x.passages > y.passages;
      });
      std::printf("best on tune: %s (passages: head1 %.3f, misheard %.3f, pairs %.3f, head %.3f)\n",
                  rows.front().name.c_str(), rows.front().first, rows.front().misheard, rows.front().pairs,
                  rows.front().passages);
      return 0;
    }
    for (const std::string set : {"tune", "report"}) {
      if (only != "all" && only != set) continue;
      print_row(set, "before", score_set(recs, set, before(), refs, verbose));
      en::LabelOptions pos = before();
      pos.parts_of_speech = true;
      print_row(set, "parts of speech", score_set(recs, set, pos, refs, false));
      en::LabelOptions heard = before();
      heard.confidence = true;
      print_row(set, "confidence", score_set(recs, set, heard, refs, false));
      en::LabelOptions phrase = before();
      phrase.phrase_share = en::LabelOptions{}.phrase_share;
      print_row(set, "noun phrase first", score_set(recs, set, phrase, refs, false));
      print_row(set, "after (all, default)", score_set(recs, set, en::LabelOptions{}, refs, verbose));
    }
  } catch (const std::exception& e) {
    std::cerr << "title_quality_benchmark: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
