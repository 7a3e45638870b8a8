#include "enrichment/structure.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text.h"
#include "enrichment/labels.h"

namespace scribe::enrichment {
namespace {

constexpr std::size_t kAnswerBytes = 400;
// Questions per section: at least 3, more when there are few sections (a
// one-topic recording still gets a handful), never more than 6.
constexpr int kMinPerSection = 3;
constexpr int kMaxPerSection = 6;
constexpr double kMinPhraseShare = 0.3;
constexpr double kMinNounFactor = 0.8;

bool one_of(std::string_view w, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), w) != list.end();
}

// Where the phrase's content terms occur in a row in the sentence (connectors
// between them allowed): the word range, or {-1, -1}.
std::pair<int, int> find_phrase(const Corpus& corpus, const CorpusSentence& s, const Keyphrase& p) {
  const auto& words = corpus.words();
  for (int a = s.first_word; a < s.end_word; ++a) {
    if (words[a].term < 0 || !std::binary_search(p.terms.begin(), p.terms.end(), words[a].term)) continue;
    std::vector<int> seen;
    int b = a;
    for (; b < s.end_word && static_cast<int>(seen.size()) < static_cast<int>(p.terms.size()); ++b) {
      const int t = words[b].term;
      if (t >= 0 && std::binary_search(p.terms.begin(), p.terms.end(), t)) {
        if (std::find(seen.begin(), seen.end(), t) == seen.end()) seen.push_back(t);
      } else if (t >= 0 || !one_of(corpus.form(words[b].form), {"of", "and", "the", "for", "in", "on", "with", "a"})) {
        break;
      }
    }
    if (seen.size() == p.terms.size()) return {a, b};
  }
  return {-1, -1};
}

std::string lower_form(const Corpus& corpus, int word) { return corpus.form(corpus.words()[word].form); }

// "works" -> "work" (and "does"), "form" -> "form" (and "do"); empty when the
// word does not look like a present-tense verb.
bool verb_base(const std::string& w, std::string& base, bool& singular) {
  if (w.size() < 3 || w.ends_with("ed") || w.ends_with("ing") || w.ends_with("ly")) return false;
  if (w.ends_with("ss") || !w.ends_with("s")) {
    base = w;
    singular = false;
    return true;
  }
  singular = true;
  if (w.ends_with("ies")) {
    base = w.substr(0, w.size() - 3) + "y";
  } else if (w.ends_with("ches") || w.ends_with("shes") || w.ends_with("sses") || w.ends_with("xes")) {
    base = w.substr(0, w.size() - 2);
  } else {
    base = w.substr(0, w.size() - 1);
  }
  return true;
}

// "Who is Curie?" when the section treats the name as a person: it says
// things ("Curie said") or carries a title ("Professor Curie").
std::string who_question(const Corpus& corpus, const LabeledSpan& section, const Keyphrase& p) {
  if (!p.proper) return {};
  for (int si = corpus.span_sentence_begin(section.span); si < corpus.span_sentence_end(section.span); ++si) {
    const CorpusSentence& s = corpus.sentences()[si];
    const auto [a, b] = find_phrase(corpus, s, p);
    if (a < 0) continue;
    const bool says = b < s.end_word && one_of(lower_form(corpus, b), {"said", "says", "told", "thinks", "argued",
                                                                       "argues", "wrote", "explained", "believes"});
    const bool titled =
        a > s.first_word && one_of(lower_form(corpus, a - 1), {"mr", "mrs", "ms", "dr", "professor", "president",
                                                               "senator", "minister", "doctor", "coach", "captain"});
    if (says || titled) return "Who is " + phrase_text(corpus, p) + "?";
  }
  return {};
}

// A question in the sentence's own terms, or "" when it has none of these shapes:
//   "how (the) black holes form"  -> "How do black holes form?"
//   "a glacier is a river of ice" -> "What is a glacier?"
//   "inflation means ..."         -> "What does inflation mean?"
std::string shaped_question(const Corpus& corpus, const CorpusSentence& s, const Keyphrase& p) {
  const auto [a, b] = find_phrase(corpus, s, p);
  if (a < 0 || b >= s.end_word || corpus.words()[b].phrase_start) return {};
  // The phrase as this sentence says it ("black holes are", not "black hole are").
  std::string x;
  for (int i = a; i < b; ++i)
    x += (i == a ? "" : corpus.words()[i].hyphen_before ? "-" : " ") + corpus.display(corpus.words()[i].form);
  int before = a;
  std::string article;
  if (before > s.first_word && lower_form(corpus, before - 1) == "the") {
    article = "the ";
    --before;
  }
  std::string base;
  bool singular = false;
  if (before > s.first_word && lower_form(corpus, before - 1) == "how" && corpus.words()[b].term >= 0 &&
      verb_base(lower_form(corpus, b), base, singular))
    return std::string(singular ? "How does " : "How do ") + article + x + " " + base + "?";
  const std::string verb = lower_form(corpus, b);
  if (verb == "means") return "What does " + x + " mean?";
  // Only the subject of its clause is being defined: "A glacier is a river",
  // not "Foraging for wild mushrooms is a hobby".
  const bool article_before = a > s.first_word && one_of(lower_form(corpus, a - 1), {"a", "an", "the"});
  const int subject_start = article_before ? a - 1 : a;
  const bool subject = subject_start == s.first_word || corpus.words()[subject_start].phrase_start;
  if (subject && b + 1 < s.end_word && (verb == "is" || verb == "are") &&
      one_of(lower_form(corpus, b + 1), {"a", "an", "the", "basically", "when", "what", "where"})) {
    const std::string lead =
        article_before && !p.proper && lower_form(corpus, a - 1) != "the" ? lower_form(corpus, a - 1) + " " : "";
    return (verb == "is" ? "What is " : "What are ") + lead + x + "?";
  }
  return {};
}

// The phrase as a question names it: "the sauce" when the speakers say "the
// sauce" (or always put another word before it, "index fund"), but "sleep",
// "black holes" and names as they are.
std::string with_article(const Corpus& corpus, const LabeledSpan& section, const Keyphrase& p) {
  const std::string x = phrase_text(corpus, p);
  const std::string& head = corpus.form(p.forms.back());
  if (p.proper || (head.ends_with("s") && !head.ends_with("ss")) || x.find(" and ") != std::string::npos) return x;
  int total = 0, determined = 0, compound = 0;
  for (int si = corpus.span_sentence_begin(section.span); si < corpus.span_sentence_end(section.span); ++si) {
    const CorpusSentence& s = corpus.sentences()[si];
    const int a = find_phrase(corpus, s, p).first;
    if (a < 0) continue;
    ++total;
    if (a == s.first_word) continue;
    const std::string& before = lower_form(corpus, a - 1);
    determined += one_of(
        before, {"the", "a", "an", "this", "that", "each", "every", "my", "your", "his", "her", "its", "our", "their"});
    compound += corpus.words()[a - 1].term >= 0 && !corpus.words()[a].phrase_start;
  }
  return total > 0 && (determined * 3 >= total || compound == total) ? "the " + x : x;
}

std::string plain_question(const Corpus& corpus, const LabeledSpan& section, const Keyphrase& p, int variant) {
  static constexpr std::string_view kForms[] = {"What is said about ", "What do we learn about ",
                                                "What is mentioned about "};
  return std::string(kForms[variant % 3]) + with_article(corpus, section, p) + "?";
}

using Ranked = std::vector<std::pair<double, int>>;  // (score, sentence), best first

// The sentences of the section that mention the phrase, best answer first.
Ranked mentions(const Corpus& corpus, const LabeledSpan& section, const std::vector<double>& scores, const Keyphrase& p,
                const std::vector<int>& used) {
  const int first = corpus.span_sentence_begin(section.span);
  Ranked ranked;
  for (int si = first; si < corpus.span_sentence_end(section.span); ++si) {
    const CorpusSentence& s = corpus.sentences()[si];
    if (find_phrase(corpus, s, p).first < 0) continue;
    double score = 0.05 + scores[si - first];
    if (s.question) score *= 0.3;  // an answer should not be another question
    if (s.end_word - s.first_word < 5) score *= 0.5;
    // Sentences that already answer another question answer this one only if nothing else does.
    if (std::find(used.begin(), used.end(), si) != used.end()) score *= 0.4;
    ranked.emplace_back(score, si);
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  return ranked;
}

// The answer led by ranked[lead]: with the next best mention when it is
// nearly as good and says something else, or else with the sentence after it
// when the lead is short.
std::vector<int> answer(const Corpus& corpus, const LabeledSpan& section, const Ranked& ranked, std::size_t lead) {
  const int best = ranked[lead].second;
  std::vector<int> out = {best};
  const std::size_t best_len = corpus.sentence_text(corpus.sentences()[best]).size();
  for (std::size_t k = 0; k < ranked.size() && k < 3; ++k) {
    if (k == lead || ranked[k].first < 0.5 * ranked[lead].first) continue;
    if (sentence_similarity(corpus, best, ranked[k].second) >= 0.8) continue;
    out.push_back(ranked[k].second);
    break;
  }
  if (out.size() == 1 && best_len < 100 && best + 1 < corpus.span_sentence_end(section.span) &&
      !corpus.sentences()[best + 1].question)
    out.push_back(best + 1);
  if (out.size() == 2 && best_len + 1 + corpus.sentence_text(corpus.sentences()[out[1]]).size() > kAnswerBytes)
    out.pop_back();
  return out;
}

}  // namespace

std::vector<QnaEntry> system_qna(const Corpus& corpus, const std::vector<LabeledSpan>& sections, int max_entries) {
  struct Made {
    int section;
    int order;
    QnaEntry entry;
  };
  std::vector<Made> made;
  if (sections.empty() || max_entries <= 0) return {};
  std::vector<int> by_salience(sections.size());
  for (std::size_t i = 0; i < sections.size(); ++i) by_salience[i] = static_cast<int>(i);
  std::stable_sort(by_salience.begin(), by_salience.end(),
                   [&](int a, int b) { return sections[a].terms.salience > sections[b].terms.salience; });
  std::vector<std::vector<double>> scores(sections.size());
  std::vector<std::size_t> next_phrase(sections.size(), 0);
  std::vector<int> asked(sections.size(), 0);
  std::vector<std::vector<int>> used(sections.size());  // sentences already in answers
  std::vector<std::string> questions;
  std::vector<std::string> subjects;  // lower-case phrases asked about
  std::size_t fallback_phrase = 0;
  int variant = 0;
  const int sections_count = static_cast<int>(sections.size());
  const int per_section =
      std::clamp((max_entries + sections_count - 1) / sections_count, kMinPerSection, kMaxPerSection);
  for (int round = 0; round < per_section; ++round) {
    for (int si : by_salience) {
      if (static_cast<int>(made.size()) >= max_entries) break;
      const LabeledSpan& section = sections[si];
      if (scores[si].empty()) scores[si] = sentence_scores(corpus, section.span, section.terms, Steering{});
      // The section's next phrase that has an answer and makes a new question.
      // Weak phrases (far below the section's best) and words that behave like
      // verbs ("stays") make questions nobody would ask; a later question needs
      // a phrase said more than once; a phrase asked about in one section is
      // not asked about again. Only when that leaves a section without any
      // question are its weak phrases asked about after all.
      for (const bool strict : {true, false}) {
        if (!strict && (round > 0 || asked[si] > 0)) break;
        std::size_t& next = strict ? next_phrase[si] : fallback_phrase;
        if (!strict) next = 0;
        while (asked[si] == round && next < section.phrases.size()) {
          const Keyphrase& p = section.phrases[next++];
          const std::string subject = to_lower(phrase_text(corpus, p));
          if (std::find(subjects.begin(), subjects.end(), subject) != subjects.end()) continue;
          const double noun = p.terms.size() == 1 ? std::min(corpus.noun_factor(p.forms.back()),
                                                             corpus.term_noun_factor(p.terms.front()))
                                                  : corpus.noun_factor(p.forms.back());
          if (strict && (p.score < kMinPhraseShare * section.phrases.front().score || noun < kMinNounFactor ||
                         (round > 0 && p.count < 2)))
            continue;
          const Ranked ranked = mentions(corpus, section, scores[si], p, used[si]);
          if (ranked.empty()) continue;
          // A question shaped by what the sentences say, answered by the sentence that says it.
          std::size_t lead = 0;
          std::string q = who_question(corpus, section, p);
          for (std::size_t k = 0; q.empty() && k < ranked.size() && k < 5; ++k) {
            q = shaped_question(corpus, corpus.sentences()[ranked[k].second], p);
            if (!q.empty()) lead = k;
          }
          if (q.empty()) q = plain_question(corpus, section, p, variant);
          if (std::find(questions.begin(), questions.end(), to_lower(q)) != questions.end()) continue;
          questions.push_back(to_lower(q));
          subjects.push_back(subject);
          ++variant;
          QnaEntry e;
          e.question = q;
          std::vector<int> in_order = answer(corpus, section, ranked, lead);
          std::sort(in_order.begin(), in_order.end());
          used[si].insert(used[si].end(), in_order.begin(), in_order.end());
          for (int sentence : in_order) {
            if (!e.answer.empty()) e.answer += ' ';
            e.answer += corpus.sentence_text(corpus.sentences()[sentence]);
            e.answer_citations.push_back({section.title, corpus.segment(corpus.sentences()[sentence].segment).start});
          }
          e.citations.push_back({section.title, section.start});
          made.push_back({si, asked[si], std::move(e)});
          ++asked[si];
        }
      }
    }
  }
  std::stable_sort(made.begin(), made.end(), [](const Made& a, const Made& b) {
    return a.section != b.section ? a.section < b.section : a.order < b.order;
  });
  std::vector<QnaEntry> out;
  for (auto& m : made) out.push_back(std::move(m.entry));
  return out;
}

}  // namespace scribe::enrichment
