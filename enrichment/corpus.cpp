#include "enrichment/corpus.h"

#include <algorithm>
#include <cmath>

#include "common/text.h"
#include "enrichment/text.h"
#include "lexicon/wordnet.h"

namespace scribe::enrichment {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026

// Length of the closing quote or bracket at `i`, 0 when there is none.
std::size_t closer_at(std::string_view text, std::size_t i) {
  const char c = text[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  // U+201D and U+2019, the typographic closing quotes.
  if (text.substr(i, 3) == "\xE2\x80\x9D" || text.substr(i, 3) == "\xE2\x80\x99") return 3;
  return 0;
}

std::size_t terminal_at(std::string_view text, std::size_t i) {
  const char c = text[i];
  if (c == '.' || c == '?' || c == '!') return 1;
  return text.substr(i, 3) == kEllipsis ? 3 : 0;
}

// A period after these ends an abbreviation, not a sentence.
bool is_abbreviation(std::string_view word) {
  if (word.size() == 1) return is_upper(word[0]);  // an initial: "J. R. R. Tolkien"
  static constexpr std::string_view kTitles[] = {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "mt"};
  const std::string lower = to_lower(word);
  return std::find(std::begin(kTitles), std::end(kTitles), lower) != std::end(kTitles);
}

bool is_determiner(std::string_view w) {
  static constexpr std::string_view kWords[] = {"the",  "a",     "an",    "this", "that",    "these", "those",
                                                "his",  "her",   "their", "its",  "our",     "my",    "your",
                                                "some", "every", "each",  "many", "several", "few"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

// Words after which the next one is usually a verb.
bool is_verb_cue(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "i",     "you",   "we",    "they",   "he",     "she",     "it",    "cannot", "to",      "can",
      "could", "will",  "would", "should", "must",   "may",     "might", "don't",  "doesn't", "didn't",
      "can't", "won't", "i'll",  "we'll",  "you'll", "they'll", "i'd",   "we'd",   "they'd"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

bool has_upper(std::string_view s) { return std::any_of(s.begin(), s.end(), is_upper); }

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> split_sentences(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const std::size_t n = text.size();
  std::size_t start = 0;
  while (start < n && is_blank(text[start])) ++start;
  std::size_t i = start;
  while (i < n) {
    const std::size_t t = terminal_at(text, i);
    if (t == 0) {
      ++i;
      continue;
    }
    std::size_t j = i + t;
    // Runs such as "?!", "..." and closing quotes stay with the sentence they end.
    while (j < n) {
      const std::size_t more = terminal_at(text, j) ? terminal_at(text, j) : closer_at(text, j);
      if (more == 0) break;
      j += more;
    }
    if (j >= n) break;
    if (!is_blank(text[j])) {  // "3.5", "U.S."
      i = j;
      continue;
    }
    std::size_t k = j;
    while (k < n && is_blank(text[k])) ++k;
    if (k >= n) break;
    bool split = !is_lower(text[k]);
    if (split && text[i] == '.') {
      std::size_t w = i;
      while (w > 0 && (is_upper(text[w - 1]) || is_lower(text[w - 1]))) --w;
      if (is_abbreviation(text.substr(w, i - w))) split = false;
    }
    if (split) {
      out.emplace_back(start, j);
      start = k;
    }
    i = k;
  }
  std::size_t end = n;
  while (end > start && is_blank(text[end - 1])) --end;
  if (end > start) out.emplace_back(start, end);
  return out;
}

Corpus::Corpus(const transcript::TranscriptArtifact& t, const LabelOptions& labeling) : t_(t), labeling_(labeling) {
  const int n = segment_count();
  recording_end_ = std::max(0.0, t.duration_seconds);
  if (n > 0) recording_end_ = std::max(recording_end_, t.segments.back().end);
  segment_words_.reserve(n + 1);
  segment_sentences_.reserve(n + 1);
  for (int i = 0; i < n; ++i) read_segment(i);
  segment_words_.push_back(static_cast<int>(words_.size()));
  segment_sentences_.push_back(static_cast<int>(sentences_.size()));
  idf_.resize(stems_.size());
  for (std::size_t term = 0; term < stems_.size(); ++term)
    idf_[term] = std::log(1.0 + static_cast<double>(std::max(n, 1)) / std::max(document_frequency_[term], 1));
  finish_forms();
  term_last_segment_.clear();
  term_last_segment_.shrink_to_fit();
}

void Corpus::read_segment(int index) {
  segment_words_.push_back(static_cast<int>(words_.size()));
  segment_sentences_.push_back(static_cast<int>(sentences_.size()));
  const std::string& text = t_.segments[index].text;
  const std::vector<Token> tokens = tokenize(text);
  // The recognizer's words are the segment's tokens one for one unless the
  // text was edited or split differently ("well-known"); only then are their
  // confidences the tokens'.
  const auto& recognized = t_.segments[index].words;
  const bool aligned = recognized.size() == tokens.size();
  std::size_t next_token = 0;
  for (const auto& [begin, end] : split_sentences(text)) {
    CorpusSentence sentence{index, begin, end, static_cast<int>(words_.size()), 0, false};
    std::size_t last = end;
    while (last > begin && closer_at(text, last - 1) == 1) --last;
    sentence.question = last > begin && text[last - 1] == '?';
    std::size_t previous_end = std::string::npos;
    for (; next_token < tokens.size() && tokens[next_token].begin < end; ++next_token) {
      const Token& tok = tokens[next_token];
      CorpusWord w;
      w.segment = index;
      auto [form_it, new_form] = form_ids_.try_emplace(tok.text, static_cast<int>(forms_.size()));
      if (new_form) {
        forms_.push_back(tok.text);
        form_term_.push_back(-1);
        mid_count_.push_back(0);
        mid_upper_count_.push_back(0);
        upper_spelling_.emplace_back();
        form_count_.push_back(0);
        after_determiner_.push_back(0);
        after_verb_cue_.push_back(0);
        confidence_sum_.push_back(0);
        confidence_count_.push_back(0);
      }
      w.form = form_it->second;
      if (aligned && recognized[next_token].confidence > 0) {
        confidence_sum_[w.form] += recognized[next_token].confidence;
        ++confidence_count_[w.form];
      }
      w.stop = is_stop_word(tok.text);
      w.filler = !w.stop && is_filler_word(tok.text);
      if (new_form && !w.stop && !w.filler && tok.text.size() >= 2) {
        // The possessive is the same term as the noun: "NASA's budget" is about NASA.
        std::string key = tok.text;
        if (key.size() > 3 && key.ends_with("'s")) key.resize(key.size() - 2);
        auto [stem_it, new_stem] = stem_ids_.try_emplace(porter_stem(key), static_cast<int>(stems_.size()));
        if (new_stem) {
          stems_.push_back(stem_it->first);
          term_frequency_.push_back(0);
          document_frequency_.push_back(0);
          term_last_segment_.push_back(-1);
          term_after_determiner_.push_back(0);
          term_after_verb_cue_.push_back(0);
        }
        form_term_[w.form] = stem_it->second;
      }
      w.term = form_term_[w.form];
      if (w.term >= 0) {
        ++term_frequency_[w.term];
        if (term_last_segment_[w.term] != index) {
          term_last_segment_[w.term] = index;
          ++document_frequency_[w.term];
        }
      }
      ++form_count_[w.form];
      if (previous_end == std::string::npos) {
        w.phrase_start = true;
      } else {
        const std::string& previous = forms_[words_.back().form];
        after_determiner_[w.form] += is_determiner(previous);
        after_verb_cue_[w.form] += is_verb_cue(previous);
        if (w.term >= 0) {
          term_after_determiner_[w.term] += is_determiner(previous);
          term_after_verb_cue_[w.term] += is_verb_cue(previous);
        }
        const std::string_view gap = std::string_view(text).substr(previous_end, tok.begin - previous_end);
        w.hyphen_before = gap == "-";
        w.phrase_start = !w.hyphen_before && gap.find_first_not_of(" '") != std::string_view::npos;
        ++mid_count_[w.form];
        const std::string_view written = std::string_view(text).substr(tok.begin, tok.end - tok.begin);
        if (has_upper(written)) {
          ++mid_upper_count_[w.form];
          upper_spelling_[w.form] = std::string(written);
        }
      }
      previous_end = tok.end;
      words_.push_back(w);
    }
    sentence.end_word = static_cast<int>(words_.size());
    sentences_.push_back(sentence);
  }
}

void Corpus::finish_forms() {
  display_.resize(forms_.size());
  proper_.assign(forms_.size(), false);
  for (std::size_t f = 0; f < forms_.size(); ++f) {
    // Sentence-initial capitals say nothing; mid-sentence ones, when most
    // occurrences have them, mark a name. "I" is a stop word and never shown.
    const bool proper = mid_upper_count_[f] > 0 && mid_upper_count_[f] * 10 >= mid_count_[f] * 6;
    proper_[f] = proper;
    display_[f] = proper && to_lower(upper_spelling_[f]) == forms_[f] ? upper_spelling_[f] : forms_[f];
  }
  mid_count_.clear();
  mid_upper_count_.clear();
  upper_spelling_.clear();

  lexical_noun_.assign(forms_.size(), 1.0);
  modifier_.assign(forms_.size(), true);
  term_lexical_noun_.assign(stems_.size(), 0.0);
  const bool lexicon = labeling_.parts_of_speech && lexicon::wordnet_available();
  for (std::size_t f = 0; f < forms_.size(); ++f) {
    const int term = form_term_[f];
    // Stop words and fillers are never heads; names WordNet lacks stay 1.
    if (lexicon && term >= 0) {
      std::string word = forms_[f];
      if (word.size() > 3 && word.ends_with("'s")) word.resize(word.size() - 2);
      const auto shares = lexicon::pos_shares(word);
      const double noun = shares[static_cast<int>(lexicon::Pos::noun)];
      const bool known = std::any_of(shares.begin(), shares.end(), [](double x) { return x > 0; });
      // Only a word with no noun sense at all is lowered: a topic word that
      // is a verb too ("orbit", "roast", "sail") is scored by its context.
      if (known && noun == 0) lexical_noun_[f] = labeling_.noun_floor;
      const double adjective = shares[static_cast<int>(lexicon::Pos::adjective)];
      const auto adjective_bases = lexicon::base_forms(word, lexicon::Pos::adjective);
      const bool graded = !adjective_bases.empty() && adjective_bases.front() != word && noun == 0;
      // English puts a singular noun before its head ("Wall Climber", not
      // "Walls Climber").
      const auto noun_bases = lexicon::base_forms(word, lexicon::Pos::noun);
      const bool plural = !noun_bases.empty() && noun_bases.front() != word && adjective == 0;
      modifier_[f] = !is_number_word(word) && !graded && !plural && (!known || noun > 0 || adjective > 0);
    }
    if (term >= 0) term_lexical_noun_[term] = std::max(term_lexical_noun_[term], lexical_noun_[f]);
  }

  // A transcript without confidences (an engine that gives none, an older
  // artifact) weighs every word alike.
  heard_.assign(forms_.size(), 1.0);
  const bool heard = labeling_.confidence && labeling_.sure_confidence > 0 &&
                     std::any_of(confidence_count_.begin(), confidence_count_.end(), [](int c) { return c > 0; });
  for (std::size_t f = 0; heard && f < forms_.size(); ++f) {
    if (confidence_count_[f] == 0) continue;
    const double mean = confidence_sum_[f] / confidence_count_[f];
    heard_[f] = std::clamp(mean / labeling_.sure_confidence, labeling_.heard_floor, 1.0);
  }
  confidence_sum_.clear();
  confidence_sum_.shrink_to_fit();
  confidence_count_.clear();
  confidence_count_.shrink_to_fit();
}

namespace {

double noun_factor_of(double count, double after_determiner, double after_verb_cue) {
  if (count <= 0) return 1;
  return std::clamp(1 + 0.5 * after_determiner / count - 0.7 * after_verb_cue / count, 0.35, 1.5);
}

}  // namespace

double Corpus::noun_factor(int form) const {
  return noun_factor_of(form_count_[form], after_determiner_[form], after_verb_cue_[form]) * lexical_noun_[form];
}

double Corpus::term_noun_factor(int term) const {
  return noun_factor_of(term_frequency_[term], term_after_determiner_[term], term_after_verb_cue_[term]) *
         term_lexical_noun_[term];
}

std::string_view Corpus::sentence_text(const CorpusSentence& s) const {
  return std::string_view(t_.segments[s.segment].text).substr(s.begin, s.end - s.begin);
}

int Corpus::find_stem(const std::string& stem) const {
  auto it = stem_ids_.find(stem);
  return it == stem_ids_.end() ? -1 : it->second;
}

}  // namespace scribe::enrichment
