#include "enrichment/labels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/text.h"
#include "enrichment/text.h"

namespace scribe::enrichment {
namespace {

// Small words that may sit inside a phrase ("salt and pepper", "history of
// the empire"); any other stop word or a filler ends it.
bool is_connector(std::string_view w) {
  return w == "of" || w == "and" || w == "the" || w == "for" || w == "in" || w == "on" || w == "with" || w == "a" ||
         w == "an";
}

// A phrase's last word must behave at least this much like a noun
// (Corpus::noun_factor) to head a title in place of its best word.
constexpr double kHeadNounFactor = 0.75;

struct KeyHash {
  std::size_t operator()(const std::vector<int>& v) const {
    std::uint64_t h = 1469598103934665603ull;
    for (int x : v) h = (h ^ static_cast<std::uint32_t>(x)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

struct Variant {
  std::vector<int> forms;
  std::vector<bool> hyphen_before;
  int count = 0;
};

struct Candidate {
  std::vector<int> terms;  // content terms in order (with repeats)
  std::vector<Variant> variants;
  int count = 0;
  int first_sentence = 0;
  bool has_connector = false;
};

// A title's words are acceptable at its edges when they are neither stop
// words nor fillers ("Going", "And", "The").
bool good_edge(const std::string& w) {
  const std::string lower = to_lower(w);
  return !is_stop_word(lower) && !is_filler_word(lower) && !is_title_small_word(lower);
}

// Joins and cuts the words of a title candidate; empty when what is left is
// not a title (fewer than two words, or a stop word at an edge).
std::string finish_title(std::vector<std::string> words) {
  if (words.size() > kMaxTitleWords) {
    words.resize(kMaxTitleWords);
    while (!words.empty() && !good_edge(words.back())) words.pop_back();
  }
  std::string text = title_case(words);
  if (text.size() > kMaxTitleBytes) {
    text = cut_at_word(text, kMaxTitleBytes);
    words.clear();
    for (std::string_view rest = text; !rest.empty();) {
      const std::size_t sp = rest.find(' ');
      words.emplace_back(rest.substr(0, sp));
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    }
    while (!words.empty() && !good_edge(words.back())) words.pop_back();
    text.clear();
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  }
  if (words.size() < 2 || !good_edge(words.front()) || !good_edge(words.back())) return {};
  return text;
}

}  // namespace

bool Steering::has(int term) const { return std::binary_search(terms.begin(), terms.end(), term); }

Steering steering_from_prompt(const Corpus& corpus, const std::string* prompt) {
  Steering out;
  if (!prompt) return out;
  for (std::string w : words(*prompt)) {
    if (is_stop_word(w) || is_filler_word(w) || w.size() < 2) continue;
    if (w.size() > 3 && w.ends_with("'s")) w.resize(w.size() - 2);
    const int term = corpus.find_stem(porter_stem(w));
    if (term >= 0) out.terms.push_back(term);
  }
  std::sort(out.terms.begin(), out.terms.end());
  out.terms.erase(std::unique(out.terms.begin(), out.terms.end()), out.terms.end());
  return out;
}

SpanTerms span_terms(const Corpus& corpus, const Span& span, const Steering& steering) {
  SpanTerms out;
  if (span.empty()) return out;
  std::unordered_map<int, int> tf;
  const auto& words = corpus.words();
  for (int i = corpus.span_word_begin(span); i < corpus.span_word_end(span); ++i) {
    if (words[i].term < 0) continue;
    ++tf[words[i].term];
    ++out.content_words;
  }
  std::vector<double> values;
  values.reserve(tf.size());
  for (const auto& [term, count] : tf) {
    const double focus = static_cast<double>(count) / corpus.term_frequency(term);
    double w = count * corpus.idf(term) * std::sqrt(focus);
    if (steering.has(term)) w *= 1 + steering.boost;
    out.weight.emplace(term, w);
    out.norm += w * w;
    values.push_back(w);
  }
  out.norm = std::sqrt(out.norm);
  const std::size_t top = std::min<std::size_t>(8, values.size());
  std::partial_sort(values.begin(), values.begin() + top, values.end(), std::greater<>());
  for (std::size_t i = 0; i < top; ++i) out.salience += values[i];
  return out;
}

std::vector<Keyphrase> keyphrases(const Corpus& corpus, const Span& span, const SpanTerms& terms,
                                  const Steering& steering, int limit) {
  if (span.empty() || limit <= 0) return {};
  const auto& words = corpus.words();
  std::unordered_map<std::vector<int>, int, KeyHash> index;
  std::vector<Candidate> candidates;
  std::vector<int> key;
  for (int si = corpus.span_sentence_begin(span); si < corpus.span_sentence_end(span); ++si) {
    const CorpusSentence& s = corpus.sentences()[si];
    for (int a = s.first_word; a < s.end_word; ++a) {
      if (words[a].term < 0) continue;
      key.clear();
      int content = 0, connectors = 0;
      for (int b = a; b < s.end_word && b - a < static_cast<int>(kMaxTitleWords); ++b) {
        const CorpusWord& w = words[b];
        if (b > a && w.phrase_start) break;
        if (w.term < 0) {
          if (!is_connector(corpus.form(w.form)) || ++connectors > 2) break;
          key.push_back(-1 - w.form);
          continue;
        }
        if (++content > 4) break;
        key.push_back(w.term);
        // The phrase may go on past a weak word ("deep sleep") but not end on one.
        if (is_weak_head(corpus.form(w.form))) continue;
        auto [it, fresh] = index.try_emplace(key, static_cast<int>(candidates.size()));
        if (fresh) {
          Candidate c;
          c.first_sentence = si;
          c.has_connector = connectors > 0;
          for (int k : key)
            if (k >= 0) c.terms.push_back(k);
          candidates.push_back(std::move(c));
        }
        Candidate& c = candidates[it->second];
        ++c.count;
        // How it is spelled here: one of the (at most three) spellings kept.
        auto same = std::find_if(c.variants.begin(), c.variants.end(), [&](const Variant& x) {
          if (static_cast<int>(x.forms.size()) != b - a + 1) return false;
          for (int i = a; i <= b; ++i)
            if (x.forms[i - a] != words[i].form) return false;
          return true;
        });
        if (same != c.variants.end()) {
          ++same->count;
        } else if (c.variants.size() < 3) {
          Variant v;
          for (int i = a; i <= b; ++i) {
            v.forms.push_back(words[i].form);
            v.hyphen_before.push_back(i > a && words[i].hyphen_before);
          }
          v.count = 1;
          c.variants.push_back(std::move(v));
        }
      }
    }
  }

  std::vector<Keyphrase> scored;
  for (const Candidate& c : candidates) {
    std::vector<int> unique_terms = c.terms;
    std::sort(unique_terms.begin(), unique_terms.end());
    unique_terms.erase(std::unique(unique_terms.begin(), unique_terms.end()), unique_terms.end());
    if (unique_terms.size() != c.terms.size()) continue;  // "very very", "bye bye"
    // The spelling said most often; among equals the most noun-like, then the
    // longest ("openings" rather than "open").
    const Variant& best =
        *std::min_element(c.variants.begin(), c.variants.end(), [&](const Variant& x, const Variant& y) {
          if (x.count != y.count) return x.count > y.count;
          const double nx = corpus.noun_factor(x.forms.back()), ny = corpus.noun_factor(y.forms.back());
          if (nx != ny) return nx > ny;
          return corpus.form(x.forms.back()).size() > corpus.form(y.forms.back()).size();
        });
    bool all_numbers = true, all_proper = true, steered = false;
    double log_sum = 0, log_heard = 0;
    int content = 0;
    for (std::size_t i = 0; i < best.forms.size(); ++i) {
      const int f = best.forms[i];
      const std::string& text = corpus.form(f);
      if (is_connector(text)) continue;
      all_numbers = all_numbers && is_digits(text);
      all_proper = all_proper && corpus.proper(f);
      log_heard += std::log(corpus.heard_factor(f));
      ++content;
    }
    if (all_numbers) continue;
    for (int t : c.terms) {
      auto it = terms.weight.find(t);
      log_sum += std::log(it == terms.weight.end() ? 1e-9 : std::max(it->second, 1e-9));
      steered = steered || steering.has(t);
    }
    const std::size_t k = c.terms.size();
    // Geometric mean: a phrase is as good as its weakest word, so a strong
    // word does not carry a weak neighbour into the title.
    const double mean = std::exp(log_sum / k);
    static constexpr double kLengthFactor[] = {1.0, 1.45, 1.6, 1.6};
    // A phrase said once may be chance adjacency; said again it is a name for the subject.
    const double repeat = c.count >= 2 ? 1 + 0.2 * std::log2(c.count) : (k == 1 ? 1.0 : 0.5);
    const double connector = c.has_connector ? (c.count >= 2 ? 0.9 : 0.3) : 1.0;
    // The last word of an English noun phrase is its head: it should be a noun.
    double score = mean * kLengthFactor[k - 1] * repeat * connector * corpus.noun_factor(best.forms.back());
    // Words the recognizer was unsure of (probably misheard) make poor titles.
    if (content > 0) score *= std::exp(log_heard / content);
    if (all_proper) score *= 1.15;
    if (steered) score *= 1 + steering.boost;
    scored.push_back({best.forms, best.hyphen_before, unique_terms, c.count, c.first_sentence, score, all_proper});
  }
  std::sort(scored.begin(), scored.end(), [](const Keyphrase& a, const Keyphrase& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.first_sentence != b.first_sentence) return a.first_sentence < b.first_sentence;
    return a.forms < b.forms;
  });
  // The best phrase is one word ("starter"): when a phrase of two words or
  // more headed by it ("sourdough starter") ends on a noun and scores near it
  // (LabelOptions::phrase_share), that phrase goes first: it names what the
  // span is about, where the word alone would be joined to another ("Starter
  // and Baker").
  if (!scored.empty() && scored.front().terms.size() == 1) {
    const int top = scored.front().terms.front();
    const double floor = corpus.label_options().phrase_share * scored.front().score;
    for (std::size_t i = 1; i < scored.size() && scored[i].score >= floor; ++i) {
      const Keyphrase& p = scored[i];
      const bool modifiers = std::all_of(p.forms.begin(), p.forms.end() - 1,
                                         [&](int f) { return corpus.form_term(f) < 0 || corpus.modifier(f); });
      if (p.terms.size() >= 2 && corpus.form_term(p.forms.back()) == top && modifiers &&
          corpus.noun_factor(p.forms.back()) >= kHeadNounFactor) {
        std::rotate(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(i),
                    scored.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        break;
      }
    }
  }
  std::vector<Keyphrase> out;
  std::vector<int> used;
  for (Keyphrase& p : scored) {
    if (static_cast<int>(out.size()) >= limit) break;
    const bool overlaps =
        std::any_of(p.terms.begin(), p.terms.end(), [&](int t) { return std::count(used.begin(), used.end(), t); });
    if (overlaps) continue;
    used.insert(used.end(), p.terms.begin(), p.terms.end());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> phrase_words(const Corpus& corpus, const Keyphrase& phrase) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < phrase.forms.size(); ++i) {
    std::string w = corpus.display(phrase.forms[i]);
    // "NASA's budget" keeps its possessive; a phrase ending in one ("the
    // camera's") names the thing itself.
    if (i + 1 == phrase.forms.size() && w.size() > 3 && (w.ends_with("'s") || w.ends_with("'S")))
      w.resize(w.size() - 2);
    if (i > 0 && phrase.hyphen_before[i] && !out.empty()) {
      out.back() += "-" + w;
    } else {
      out.push_back(w);
    }
  }
  return out;
}

std::string phrase_text(const Corpus& corpus, const Keyphrase& phrase) {
  std::string out;
  for (const auto& w : phrase_words(corpus, phrase)) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string unique_title(const Corpus& corpus, const std::vector<Keyphrase>& phrases, int index_hint,
                         std::vector<std::string>& taken, TitleShape shape) {
  std::vector<std::vector<std::string>> options;
  std::vector<std::vector<std::string>> words;
  for (const auto& p : phrases) words.push_back(phrase_words(corpus, p));
  auto has_and = [](const std::vector<std::string>& w) { return std::count(w.begin(), w.end(), "and") > 0; };
  auto joined = [&](std::size_t a, std::size_t b) {
    std::vector<std::string> out = words[a];
    out.push_back("and");
    out.insert(out.end(), words[b].begin(), words[b].end());
    return out;
  };
  // In order of preference: the best phrase when it has two words or more;
  // the best two joined ("Interest Rates and Mortgages"); the other phrases
  // and pairs, which tell apart two sections about the same subject.
  for (std::size_t a = 0; a < words.size() && a < 3; ++a) {
    if (words[a].size() >= 2 && shape == TitleShape::kPhrase) options.push_back(words[a]);
    for (std::size_t b = a + 1; b < words.size() && b < 4; ++b) {
      if (words[a].size() + words[b].size() + 1 <= kMaxTitleWords && !has_and(words[a]) && !has_and(words[b]))
        options.push_back(joined(a, b));
    }
    if (words[a].size() >= 2 && shape == TitleShape::kPair) options.push_back(words[a]);
  }
  if (!words.empty() && words[0].size() == 1) options.push_back({"notes", "on", words[0][0]});
  for (const auto& option : options) {
    std::string title = finish_title(option);
    if (title.empty()) continue;
    const std::string lower = to_lower(title);
    if (std::find(taken.begin(), taken.end(), lower) != taken.end()) continue;
    taken.push_back(lower);
    return title;
  }
  // Everything is taken (or there was nothing to say): number the best option,
  // or the span itself.
  std::vector<std::string> base = options.empty() ? std::vector<std::string>{"part"} : options.front();
  if (base.size() > kMaxTitleWords - 2) base.resize(kMaxTitleWords - 2);
  for (int n = std::max(2, index_hint + 1);; ++n) {
    std::vector<std::string> numbered = base;
    if (!options.empty()) numbered.push_back("part");
    numbered.push_back(std::to_string(n));
    std::string title = title_case(numbered);
    if (title.size() > kMaxTitleBytes) title = finish_title({"part", std::to_string(n)});
    const std::string lower = to_lower(title);
    if (std::find(taken.begin(), taken.end(), lower) != taken.end()) continue;
    taken.push_back(lower);
    return title;
  }
}

std::vector<std::string> make_titles(const Corpus& corpus, const std::vector<std::vector<Keyphrase>>& phrases,
                                     const std::vector<int>& index_hint, TitleShape shape) {
  std::vector<std::string> taken;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < phrases.size(); ++i) {
    const int hint = i < index_hint.size() ? index_hint[i] : static_cast<int>(i);
    out.push_back(unique_title(corpus, phrases[i], hint, taken, shape));
  }
  return out;
}

std::string sentence_headline(const Corpus& corpus, int sentence, const SpanTerms& context,
                              std::vector<std::string>& taken) {
  const CorpusSentence& s = corpus.sentences()[sentence];
  const auto& words = corpus.words();
  auto content = [&](int i) { return words[i].term >= 0; };
  struct Run {
    double score;
    int begin;
    int end;
  };
  std::vector<Run> runs;
  for (int a = s.first_word; a < s.end_word; ++a) {
    // Start where a run of content words starts, so "space telescope" is
    // never cut to "Telescope".
    if (!content(a) || (a > s.first_word && !words[a].phrase_start && content(a - 1))) continue;
    double weight = 0;
    int content_count = 0;
    for (int b = a; b < s.end_word && b - a < static_cast<int>(kMaxTitleWords); ++b) {
      if (b > a && words[b].phrase_start) break;
      if (!content(b)) continue;
      ++content_count;
      auto it = context.weight.find(words[b].term);
      weight += it == context.weight.end() ? 0 : it->second;
      const int length = b - a + 1;
      if (length < 2 || content_count * 2 < length) continue;
      // The subject of the first clause makes the most natural headline.
      const double subject = a == s.first_word || words[a - 1].phrase_start ? 1.2 : 1.0;
      runs.push_back({weight * subject * (1 + 0.1 * length), a, b + 1});
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& x, const Run& y) { return x.score > y.score; });
  for (const Run& r : runs) {
    std::vector<std::string> out;
    for (int i = r.begin; i < r.end; ++i) {
      const std::string& w = corpus.display(words[i].form);
      if (i > r.begin && words[i].hyphen_before) {
        out.back() += "-" + w;
      } else {
        out.push_back(w);
      }
    }
    std::string title = finish_title(out);
    if (title.empty()) continue;
    const std::string lower = to_lower(title);
    if (std::find(taken.begin(), taken.end(), lower) != taken.end()) continue;
    taken.push_back(lower);
    return title;
  }
  return {};
}

}  // namespace scribe::enrichment
