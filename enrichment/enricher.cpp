#include "enrichment/enricher.h"

#include <algorithm>
#include <cmath>

#include "enrichment/corpus.h"
#include "enrichment/labels.h"
#include "enrichment/structure.h"

namespace scribe::enrichment {
namespace {

std::vector<Span> find_sections(const Corpus& corpus, const EnrichOptions& o) {
  std::vector<int> boundaries;
  for (const TopicBoundary& b : find_boundaries(corpus, o.segmentation_method, o.segmentation))
    boundaries.push_back(b.segment);
  return spans_from_boundaries(corpus.segment_count(), boundaries);
}

// Chapters are sections, merged when there are more than max_chapters or
// when one is shorter than min_chapter_seconds. They are never split or
// padded: a recording with three topics has three chapters, not eight.
std::vector<Span> chapter_spans(const Corpus& corpus, const std::vector<Span>& sections, const EnrichOptions& o) {
  return merge_spans(corpus, sections, std::max(1, o.max_chapters), o.min_chapter_seconds);
}

// Acts group chapters (or sections, when chapters are too few to make
// three): about one act per chapters_per_act of them.
std::vector<Span> act_spans(const Corpus& corpus, const std::vector<LabeledSpan>& parts, const EnrichOptions& o) {
  std::vector<Span> base;
  for (const LabeledSpan& p : parts) base.push_back(p.span);
  const int n = static_cast<int>(base.size());
  const int wanted = static_cast<int>(std::lround(n / std::max(1.0, o.chapters_per_act)));
  const int target = std::min(n, std::clamp(wanted, o.min_acts, std::max(o.min_acts, o.max_acts)));
  return merge_spans(corpus, base, target, 0);
}

// An act tells its story through its parts: the most central sentence of
// each of its most salient parts, in time order. An act of one part gets
// that part's most central sentences.
void tell_acts(const Corpus& corpus, std::vector<LabeledSpan>& acts, const std::vector<LabeledSpan>& parts,
               const EnrichOptions& o) {
  for (LabeledSpan& act : acts) {
    std::vector<const LabeledSpan*> inside;
    for (const LabeledSpan& p : parts)
      if (p.span.first >= act.span.first && p.span.end <= act.span.end) inside.push_back(&p);
    if (inside.size() < 2) continue;
    std::stable_sort(inside.begin(), inside.end(),
                     [](const LabeledSpan* a, const LabeledSpan* b) { return a->terms.salience > b->terms.salience; });
    std::vector<int> picked;
    for (const LabeledSpan* p : inside) {
      if (static_cast<int>(picked.size()) >= o.act_summary_sentences) break;
      const auto scores = sentence_scores(corpus, p->span, p->terms, Steering{});
      const auto best = pick_sentences(corpus, corpus.span_sentence_begin(p->span), scores, 1);
      picked.insert(picked.end(), best.begin(), best.end());
    }
    if (!picked.empty()) act.summary = join_sentences(corpus, picked, o.act_summary_bytes);
  }
}

std::vector<Chapter> to_chapters(const std::vector<LabeledSpan>& spans) {
  std::vector<Chapter> out;
  for (const LabeledSpan& s : spans) out.push_back({s.start, s.end, s.title, s.summary});
  return out;
}

struct Built {
  std::vector<LabeledSpan> sections;
  std::vector<LabeledSpan> chapters;
};

Built label_structure(const Corpus& corpus, const std::vector<Span>& sections, const Steering& steering,
                      const EnrichOptions& o) {
  Built b;
  const LabelStyle style{o.summary_sentences, o.summary_bytes, TitleShape::kPhrase};
  b.sections = label_spans(corpus, sections, Timing::kSegments, steering, style);
  b.chapters = label_spans(corpus, chapter_spans(corpus, sections, o), Timing::kCovering, steering, style);
  return b;
}

// The stored sections as spans, when they tile the transcript's segments
// exactly; otherwise nothing (the caller segments again).
std::vector<Span> spans_of(const std::vector<Section>& sections, int segment_count) {
  std::vector<Span> out;
  int next = 0;
  for (const Section& s : sections) {
    if (s.first_segment_index != next || s.segment_count <= 0) return {};
    out.push_back({next, next + s.segment_count});
    next += s.segment_count;
  }
  if (next != segment_count) return {};
  return out;
}

}  // namespace

EnrichmentArtifact enrich(const transcript::TranscriptArtifact& t, const EnrichOptions& o) {
  EnrichmentArtifact a;
  a.method = kExtractiveMethod;
  const Corpus corpus(t, o.labeling);
  if (corpus.segment_count() == 0) return a;
  const Steering none;
  const std::vector<Span> section_spans = find_sections(corpus, o);
  const Built built = label_structure(corpus, section_spans, none, o);
  for (const LabeledSpan& s : built.sections)
    a.sections.push_back(
        {s.span.first, s.span.end - s.span.first, s.start, s.end, s.title, s.summary, corpus.segment(s.span.first).id});
  a.chapters = to_chapters(built.chapters);
  const auto& parts = static_cast<int>(built.chapters.size()) >= o.min_acts ? built.chapters : built.sections;
  const LabelStyle act_style{o.act_summary_sentences, o.act_summary_bytes, TitleShape::kPair};
  std::vector<LabeledSpan> acts = label_spans(corpus, act_spans(corpus, parts, o), Timing::kCovering, none, act_style);
  tell_acts(corpus, acts, parts, o);
  a.acts = to_chapters(acts);
  a.qna = system_qna(corpus, built.sections, o.max_qna);
  a.posting = build_posting(corpus, built.sections, built.chapters, none);
  return a;
}

PostingChapters posting_chapters(const transcript::TranscriptArtifact& t, const std::vector<Section>& sections,
                                 const std::optional<std::string>& refine_prompt) {
  const EnrichOptions o;
  const Corpus corpus(t, o.labeling);
  PostingChapters out;
  if (corpus.segment_count() > 0) {
    std::vector<Span> spans = spans_of(sections, corpus.segment_count());
    if (spans.empty()) spans = find_sections(corpus, o);
    const Steering steering = steering_from_prompt(corpus, refine_prompt ? &*refine_prompt : nullptr);
    const Built built = label_structure(corpus, spans, steering, o);
    out = build_posting(corpus, built.sections, built.chapters, steering);
  }
  out.refine_prompt = refine_prompt;
  return out;
}

}  // namespace scribe::enrichment
