#include "speech/sentences.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string_view>
#include <tuple>
#include <utility>

#include "common/text.h"

namespace scribe::speech {
namespace {

// Pauses are compared at this tolerance, so that floating-point noise in
// recognizer times (1.7 - 0.5 = 1.19999…) does not decide a boundary.
constexpr double kTimeEpsilon = 1e-9;

// One recognized word after the punctuation the engine attached to it (if
// any) has been split off and normalized.
struct Token {
  std::string text;
  double start = 0;
  double end = 0;
  double confidence = 0;
  std::optional<int> speaker;
  std::optional<std::string> given;  // ".", "?" or "," from the engine
};

bool one_of(std::string_view word, std::initializer_list<std::string_view> list) {
  for (auto w : list) {
    if (w == word) return true;
  }
  return false;
}

// Words after which a sentence is never split when another split point
// exists: they lean on the next word ("the | house" would read badly).
bool is_glue(std::string_view w) {
  return one_of(w, {"the",  "a",     "an",   "of",    "to",    "in",    "on",   "at",   "for", "with",
                    "from", "by",    "into", "onto",  "about", "my",    "your", "his",  "her", "its",
                    "our",  "their", "this", "these", "those", "every", "each", "some", "any", "very"});
}

// Words that commonly open a new sentence in speech; a split before one reads
// naturally, so they win ties between equally long pauses.
bool is_starter(std::string_view w) {
  return one_of(w, {"and",  "but",    "so",       "because", "then",     "now",    "well", "okay", "ok", "or",
                    "also", "anyway", "actually", "however", "although", "though", "yes",  "yeah", "oh", "alright"});
}

// Conjunctions before which a noticeable pause takes a comma.
bool is_conjunction(std::string_view w) {
  return one_of(w, {"and", "but", "so", "because", "or", "then", "although", "though", "while", "whereas"});
}

bool is_subject_pronoun(std::string_view w) { return one_of(w, {"i", "you", "we", "they", "he", "she", "it"}); }

// Whether a lower-cased, unpunctuated sentence reads as a question. Kept
// deliberately simple, from its first words only:
//  - a wh-word ("what", "how", …) starts a question unless a subject pronoun
//    follows it directly, which marks a subordinate clause ("when I was
//    young", "what we need is");
//  - an auxiliary ("is", "can", "didn't", …) starts a question when a subject
//    or determiner follows ("is it", "can you", "are the"); "do" and "have"
//    also start imperatives ("do it again", "have a look"), so they need a
//    personal pronoun ("do you", "have we").
// One discourse opener in front ("so what do you think") is skipped.
// Exclamations ("what a day") come out as questions; tag questions ("…,
// right") are not detected.
bool is_question(const std::vector<std::string>& words) {
  size_t i = 0;
  if (words.size() > 1 && one_of(words[0], {"so", "and", "but", "well", "okay", "ok", "oh", "now"})) i = 1;
  const std::string& first = words[i];
  const std::string next = i + 1 < words.size() ? words[i + 1] : std::string();
  if (one_of(first, {"what", "why", "how", "who", "whom", "whose", "where", "when", "which", "what's", "how's",
                     "where's", "who's", "why's", "when's"})) {
    return !is_subject_pronoun(next);
  }
  if (one_of(first, {"do", "have"})) return one_of(next, {"i", "you", "we", "they"});
  if (one_of(first, {"is",       "are",    "am",        "was",     "were",   "does",    "did",    "can",   "could",
                     "would",    "will",   "should",    "shall",   "may",    "might",   "must",   "has",   "had",
                     "isn't",    "aren't", "wasn't",    "weren't", "don't",  "doesn't", "didn't", "can't", "couldn't",
                     "wouldn't", "won't",  "shouldn't", "haven't", "hasn't", "hadn't"})) {
    return is_subject_pronoun(next) ||
           one_of(next, {"there", "this", "that", "the", "a", "an", "your", "my", "our", "his", "her", "their",
                         "anyone", "anybody", "someone", "somebody", "everyone", "everybody"});
  }
  return false;
}

// Abbreviations whose final dot is part of the word, not a sentence end.
bool is_abbreviation(const std::string& without_dot) {
  std::string w = to_lower(without_dot);
  if (one_of(w, {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e"})) return true;
  // Initialisms such as "U.S" (from "U.S."): letters separated by dots.
  if (w.find('.') == std::string::npos) return false;
  size_t run = 0;
  for (char c : w) {
    run = c == '.' ? 0 : run + 1;
    if (run > 1) return false;
  }
  return true;
}

// Splits trailing punctuation off `text` and returns it normalized to the
// values SentenceWord::punctuation carries: "?" wins over "." ("!" and "…"
// count as "."), which wins over "," (";" and ":" count as ",").
std::optional<std::string> strip_punctuation(std::string& text) {
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026 in UTF-8
  bool question = false, stop = false, comma = false;
  std::string stripped;
  for (;;) {
    if (text.size() >= kEllipsis.size() && std::string_view(text).substr(text.size() - kEllipsis.size()) == kEllipsis) {
      stop = true;
      text.resize(text.size() - kEllipsis.size());
      stripped = "…" + stripped;
      continue;
    }
    if (text.empty()) break;
    char c = text.back();
    if (c == '?') {
      question = true;
    } else if (c == '.' || c == '!') {
      stop = true;
    } else if (c == ',' || c == ';' || c == ':') {
      comma = true;
    } else {
      break;
    }
    stripped.insert(stripped.begin(), c);
    text.pop_back();
  }
  if (stripped == "." && !text.empty() && is_abbreviation(text)) {
    text += '.';
    return std::nullopt;
  }
  if (question) return "?";
  if (stop) return ".";
  if (comma) return ",";
  return std::nullopt;
}

// Turns input words into tokens. A token that is punctuation only (some
// engines emit "," as a word of its own) attaches to the word before it.
std::vector<Token> tokenize(const std::vector<AttributedWord>& words) {
  std::vector<Token> tokens;
  tokens.reserve(words.size());
  for (const auto& w : words) {
    Token t{std::string(trim(w.word.text)), w.word.start, w.word.end, w.word.confidence, w.speaker, std::nullopt};
    t.given = strip_punctuation(t.text);
    if (t.text.empty()) {
      if (t.given && !tokens.empty()) {
        auto& prev = tokens.back().given;
        // Keep the stronger mark: "?" over "." over ",".
        if (!prev || *prev == "," || (*prev == "." && *t.given == "?")) prev = t.given;
      }
      continue;
    }
    tokens.push_back(std::move(t));
  }
  return tokens;
}

double gap_after(const std::vector<Token>& t, size_t i) {
  return i + 1 < t.size() ? std::max(0.0, t[i + 1].start - t[i].end) : 0.0;
}

bool at_least(double value, double threshold) { return value + kTimeEpsilon >= threshold; }

// Splits tokens [begin, end) until every part is within max_words and
// max_seconds. The split point is chosen by, in order: not right after a glue
// word; leaving at least min_words on both sides; the longest pause (to the
// millisecond); before a sentence-starter word; after an engine comma; nearest
// the middle (so that a run without pauses halves evenly).
void split_long(const std::vector<Token>& t, size_t begin, size_t end, const SentenceOptions& o,
                std::vector<std::pair<size_t, size_t>>& out) {
  const size_t n = end - begin;
  const double duration = t[end - 1].end - t[begin].start;
  const size_t max_words = static_cast<size_t>(std::max(1, o.max_words));
  if (n < 2 || (n <= max_words && duration <= o.max_seconds + kTimeEpsilon)) {
    out.emplace_back(begin, end);
    return;
  }
  const size_t min_words = static_cast<size_t>(std::max(0, o.min_words));
  using Key = std::tuple<bool, bool, long long, bool, bool, long long>;
  size_t best = begin + 1;
  Key best_key{};
  for (size_t k = begin + 1; k < end; ++k) {
    Key key{!is_glue(to_lower(t[k - 1].text)),
            k - begin >= min_words && end - k >= min_words,
            std::llround(gap_after(t, k - 1) * 1000.0),
            is_starter(to_lower(t[k].text)),
            t[k - 1].given == ",",
            -std::llabs(static_cast<long long>(2 * k) - static_cast<long long>(begin + end))};
    if (k == begin + 1 || key > best_key) {
      best = k;
      best_key = key;
    }
  }
  split_long(t, begin, best, o, out);
  split_long(t, best, end, o, out);
}

// Sentence ranges: boundaries from speakers, pauses and engine punctuation,
// then long runs split.
std::vector<std::pair<size_t, size_t>> find_sentences(const std::vector<Token>& t, const SentenceOptions& o) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t run_start = 0;
  for (size_t i = 1; i <= t.size(); ++i) {
    bool boundary = i == t.size();
    if (!boundary) {
      const Token& prev = t[i - 1];
      const double gap = gap_after(t, i - 1);
      const size_t run_words = i - run_start;
      boundary = prev.speaker != t[i].speaker || at_least(gap, o.hard_pause_seconds) ||
                 (at_least(gap, o.sentence_pause_seconds) && run_words >= static_cast<size_t>(o.min_words)) ||
                 prev.given == "." || prev.given == "?";
    }
    if (boundary) {
      split_long(t, run_start, i, o, runs);
      run_start = i;
    }
  }
  return runs;
}

// Upper-cases the first letter: ASCII, and the Latin-1 lower-case letters
// (UTF-8 0xC3 0xA0-0xBE except 0xB7 '÷'), which cover most Western European
// sentence starts; other scripts are left as they are.
std::string capitalize(std::string w) {
  if (w.empty()) return w;
  unsigned char c0 = static_cast<unsigned char>(w[0]);
  if (c0 >= 'a' && c0 <= 'z') {
    w[0] = static_cast<char>(c0 - 'a' + 'A');
  } else if (c0 == 0xC3 && w.size() > 1) {
    unsigned char c1 = static_cast<unsigned char>(w[1]);
    if (c1 >= 0xA0 && c1 <= 0xBE && c1 != 0xB7) w[1] = static_cast<char>(c1 - 0x20);
  }
  return w;
}

// "i" and its contractions ("i'm", "i’ve", …) are always capitalized.
bool is_pronoun_i(const std::string& w) {
  if (w.empty() || w[0] != 'i') return false;
  return w.size() == 1 || w[1] == '\'' || w.compare(1, 3, "\xE2\x80\x99") == 0;
}

// Comma rules for engines that give no punctuation. Conservative: a comma
// after an interjection that opens the sentence ("Yes, I did"), after a
// discourse word that opens it when a pause follows ("So, …", "No, …"), and
// after any word followed by a pause of comma_pause_seconds before a
// conjunction, or by a pause midway to sentence_pause_seconds. Never after a
// glue word ("the … house" is hesitation, not a clause break).
bool wants_comma(const std::vector<std::string>& lw, size_t j, double pause, const SentenceOptions& o) {
  if (j + 1 >= lw.size() || is_glue(lw[j])) return false;
  if (j == 0) {
    if (one_of(lw[0], {"yes", "yeah", "yep", "okay", "ok", "oh", "alright", "hmm", "um", "uh"})) return true;
    if (lw[0] == "well" && !one_of(lw[1], {"done", "known", "enough", "being"})) return true;
    if (one_of(lw[0], {"so", "no", "now", "right", "actually", "anyway"}) && at_least(pause, o.comma_pause_seconds)) {
      return true;
    }
  }
  if (at_least(pause, o.comma_pause_seconds) && is_conjunction(lw[j + 1])) return true;
  const double long_pause = (o.comma_pause_seconds + o.sentence_pause_seconds) / 2;
  return at_least(pause, long_pause);
}

Sentence make_sentence(const std::vector<Token>& t, size_t begin, size_t end, bool engine_punctuates,
                       const SentenceOptions& o) {
  Sentence s;
  s.start = t[begin].start;
  s.end = t[end - 1].end;
  s.speaker = t[begin].speaker;
  std::vector<std::string> lw;
  for (size_t i = begin; i < end; ++i) lw.push_back(to_lower(t[i].text));

  for (size_t i = begin; i < end; ++i) {
    const size_t j = i - begin;
    SentenceWord w{t[i].text, t[i].start, t[i].end, t[i].confidence, t[i].given};
    if (is_pronoun_i(w.text)) w.text = capitalize(w.text);
    if (j == 0) w.text = capitalize(w.text);
    if (i + 1 == end) {
      if (w.punctuation != "." && w.punctuation != "?") w.punctuation = is_question(lw) ? "?" : ".";
    } else if (!engine_punctuates && !w.punctuation && wants_comma(lw, j, gap_after(t, i), o)) {
      w.punctuation = ",";
    }
    if (!s.text.empty()) s.text += ' ';
    s.text += w.text;
    if (w.punctuation) s.text += *w.punctuation;
    s.words.push_back(std::move(w));
  }
  return s;
}

}  // namespace

std::vector<Sentence> build_sentences(const std::vector<AttributedWord>& words, const SentenceOptions& options) {
  const std::vector<Token> tokens = tokenize(words);
  std::vector<Sentence> sentences;
  if (tokens.empty()) return sentences;
  // An engine that punctuates (Whisper) places commas better than pause
  // heuristics can, so then only its commas are kept.
  bool engine_punctuates = false;
  for (const auto& t : tokens) engine_punctuates = engine_punctuates || t.given.has_value();
  for (const auto& [begin, end] : find_sentences(tokens, options)) {
    sentences.push_back(make_sentence(tokens, begin, end, engine_punctuates, options));
  }
  return sentences;
}

}  // namespace scribe::speech
