#include "enrichment/text.h"

#include <initializer_list>
#include <string_view>
#include <utility>
#include <unordered_set>

#include "common/text.h"

namespace scribe::enrichment {
namespace {

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// U+2019 RIGHT SINGLE QUOTATION MARK, the apostrophe of typeset text.
constexpr std::string_view kTypographicApostrophe = "\xE2\x80\x99";

using WordSet = std::unordered_set<std::string_view>;

const WordSet& stop_words() {
  static const WordSet words = {
      "a",         "about",     "above",      "after",    "again",     "against",   "ain't",    "all",     "almost",
      "also",      "although",  "always",     "am",       "among",     "an",        "and",      "another", "any",
      "anybody",   "anyone",    "are",        "aren't",   "around",    "as",        "at",       "be",      "became",
      "because",   "become",    "been",       "before",   "being",     "below",     "between",  "both",    "but",
      "by",        "can",       "can't",      "cannot",   "could",     "could've",  "couldn't", "d",       "did",
      "didn't",    "do",        "does",       "doesn't",  "doing",     "don't",     "done",     "down",    "during",
      "each",      "either",    "else",       "enough",   "etc",       "even",      "ever",     "every",   "everybody",
      "everyone",  "few",       "for",        "from",     "further",   "had",       "hadn't",   "has",     "hasn't",
      "have",      "haven't",   "having",     "he",       "he'd",      "he'll",     "he's",     "her",     "here",
      "here's",    "hers",      "herself",    "him",      "himself",   "his",       "how",      "how's",   "however",
      "i",         "i'd",       "i'll",       "i'm",      "i've",      "if",        "in",       "into",    "is",
      "isn't",     "it",        "it'd",       "it'll",    "it's",      "its",       "itself",   "just",    "let's",
      "ll",        "m",         "many",       "may",      "me",        "might",     "might've", "mine",    "more",
      "most",      "much",      "must",       "must've",  "mustn't",   "my",        "myself",   "neither", "no",
      "nor",       "not",       "now",        "of",       "off",       "often",     "on",       "once",    "one",
      "only",      "onto",      "or",         "other",    "others",    "otherwise", "ought",    "our",     "ours",
      "ourselves", "out",       "over",       "own",      "per",       "perhaps",   "quite",    "rather",  "re",
      "s",         "same",      "several",    "shall",    "shan't",    "she",       "she'd",    "she'll",  "she's",
      "should",    "should've", "shouldn't",  "since",    "so",        "some",      "somebody", "someone", "something",
      "somewhat",  "such",      "t",          "than",     "that",      "that'll",   "that's",   "the",     "their",
      "theirs",    "them",      "themselves", "then",     "there",     "there's",   "these",    "they",    "they'd",
      "they'll",   "they're",   "they've",    "this",     "those",     "though",    "through",  "thus",    "till",
      "to",        "too",       "toward",     "towards",  "under",     "until",     "up",       "upon",    "us",
      "ve",        "very",      "via",        "was",      "wasn't",    "we",        "we'd",     "we'll",   "we're",
      "we've",     "were",      "weren't",    "what",     "what's",    "whatever",  "when",     "when's",  "whenever",
      "where",     "where's",   "whereas",    "whether",  "which",     "while",     "who",      "who's",   "whoever",
      "whom",      "whose",     "why",        "why's",    "will",      "with",      "within",   "without", "won't",
      "would",     "would've",  "wouldn't",   "y'all",    "yet",       "you",       "you'd",    "you'll",  "you're",
      "you've",    "your",      "yours",      "yourself", "yourselves"};
  return words;
}

// Chosen from what people say in interviews, talks and podcasts: these words
// are frequent in every topic, so as keywords they only make noise, and a
// title that starts or ends with one ("Going", "Stuff") does not read as one.
const WordSet& filler_words() {
  static const WordSet words = {
      "absolutely", "actually",   "ah",        "alright",  "anything",   "anyway",    "anyways",   "away",
      "back",       "basically",  "bit",       "came",     "certainly",  "come",      "comes",     "coming",
      "course",     "definitely", "er",        "erm",      "everything", "exactly",   "feel",      "felt",
      "first",      "get",        "gets",      "getting",  "go",         "goes",      "going",     "gone",
      "gonna",      "good",       "got",       "gotta",    "gotten",     "great",     "guess",     "guy",
      "guys",       "far",        "happen",    "happened", "happens",    "hello",     "hey",       "hi",
      "hmm",        "honestly",   "huh",       "kind",     "kinda",      "kinds",     "know",      "knows",
      "let",        "like",       "literally", "look",     "looked",     "looking",   "looks",     "lot",
      "lots",       "make",       "makes",     "making",   "maybe",      "mean",      "means",     "mhm",
      "mm",         "need",       "needs",     "next",     "nice",       "nothing",   "obviously", "oh",
      "ok",         "okay",       "pretty",    "probably", "put",        "really",    "right",     "said",
      "saw",        "say",        "saying",    "says",     "see",        "seriously", "seen",      "sort",
      "sorta",      "sorts",      "start",     "started",  "stuff",      "sure",      "take",      "takes",
      "taking",     "talk",       "talked",    "talking",  "tell",       "thank",     "thanks",    "thing",
      "things",     "think",      "thinking",  "today",    "told",       "took",      "totally",   "tried",
      "try",        "trying",     "uh",        "um",       "wanna",      "want",      "wanted",    "wants",
      "way",        "well",       "went",      "whole",    "yeah",       "yep",       "yes"};
  return words;
}

const WordSet& weak_heads() {
  static const WordSet words = {
      "able", "actual", "add", "added", "allow", "allows", "available", "bad", "basic", "become", "becomes", "best",
      "better", "big", "bigger", "biggest", "brief", "bring", "brings", "broad", "build", "builds", "built", "call",
      "called", "certain", "change", "changed", "cheap", "clear", "close", "common", "complete", "complex", "current",
      "cut", "dangerous", "dark", "deep", "different", "difficult", "direct", "due", "early", "easy", "entire", "exact",
      "extra", "fair", "fast", "faster", "final", "find", "fine", "follow", "found", "free", "full", "general", "give",
      "gives", "grew", "grow", "grows", "hard", "harder", "heavy", "help", "helps", "high", "higher", "hold", "huge",
      "important", "interesting", "keep", "keeps", "kept", "large", "larger", "last", "late", "later", "learn",
      "learned", "least", "leave", "left", "less", "likely", "little", "live", "local", "long", "longer", "low",
      "lower", "main", "major", "melt", "melts", "minor", "modern", "move", "moved", "moves", "near", "new", "newer",
      "normal", "old", "older", "open", "overall", "particular", "past", "perfect", "plain", "poor", "popular",
      "possible", "present", "previous", "primary", "private", "proper", "public", "quick", "quiet", "rare", "ready",
      "real", "recent", "regular", "related", "rich", "rough", "safe", "seem", "seems", "serious", "set", "short",
      "similar", "simple", "single", "slow", "small", "smaller", "social", "soft", "special", "specific", "spend",
      "spent", "stay", "stays", "strong", "sudden", "tall", "tend", "tiny", "top", "total", "tough", "true", "turn",
      "turns", "typical", "use", "used", "uses", "usual", "various", "warm", "weak", "wide", "wild", "works", "worked",
      "wrong", "young",
      // Adverbs of time and frequency, and the one short participle the
      // "-ed" rule misses: "What is said about sometimes?" asks about nothing.
      "again", "almost", "already", "also", "always", "instead", "made", "never", "sometimes", "soon", "still",
      "together",
      // Adjectives of touch and temperature, as common as "warm" and "soft".
      "clean", "cold", "dry", "fresh", "hot", "wet",
      // Places relative to something, not things.
      "inside", "outside"};
  return words;
}

const WordSet& title_small_words() {
  static const WordSet words = {"a",  "an", "and", "as",  "at",  "but",  "by", "for", "from", "in",
                                "of", "on", "or",  "nor", "the", "than", "to", "vs",  "with"};
  return words;
}

// The stemmer works in place on one word. Letters are consonants except
// a, e, i, o, u, and y after a consonant; every word reads [C](VC)^m[V], and
// m, the measure, is what most rules test.
class PorterStemmer {
 public:
  explicit PorterStemmer(std::string_view word) : b_(word) {}

  std::string run() && {
    if (b_.size() > 2) {
      step1a();
      step1b();
      step1c();
      step2();
      step3();
      step4();
      step5();
    }
    return std::move(b_);
  }

 private:
  struct Rule {
    std::string_view suffix;
    std::string_view replacement;
  };

  bool consonant(std::size_t i) const {
    switch (b_[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i == 0 || !consonant(i - 1);
      default:
        return true;
    }
  }

  // m of the first `len` letters.
  int measure(std::size_t len) const {
    std::size_t i = 0;
    while (i < len && consonant(i)) ++i;
    int m = 0;
    while (i < len) {
      while (i < len && !consonant(i)) ++i;
      if (i >= len) break;
      while (i < len && consonant(i)) ++i;
      ++m;
    }
    return m;
  }

  bool has_vowel(std::size_t len) const {
    for (std::size_t i = 0; i < len; ++i)
      if (!consonant(i)) return true;
    return false;
  }

  bool double_consonant(std::size_t len) const { return len >= 2 && b_[len - 1] == b_[len - 2] && consonant(len - 1); }

  // consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "snow").
  bool cvc(std::size_t len) const {
    if (len < 3 || !consonant(len - 3) || consonant(len - 2) || !consonant(len - 1)) return false;
    const char c = b_[len - 1];
    return c != 'w' && c != 'x' && c != 'y';
  }

  bool ends(std::string_view suffix) const {
    return b_.size() >= suffix.size() && std::string_view(b_).ends_with(suffix);
  }

  std::size_t stem_len(std::string_view suffix) const { return b_.size() - suffix.size(); }

  void replace_suffix(std::string_view suffix, std::string_view replacement) {
    b_.erase(stem_len(suffix));
    b_ += replacement;
  }

  // Applies the longest rule whose suffix ends the word, when the stem before
  // it has a measure above `min_measure`. The longest match decides even if
  // its condition then fails: no shorter rule of the step is tried.
  void apply_longest(std::initializer_list<Rule> rules, int min_measure) {
    const Rule* best = nullptr;
    for (const Rule& r : rules)
      if (ends(r.suffix) && (!best || r.suffix.size() > best->suffix.size())) best = &r;
    if (best && measure(stem_len(best->suffix)) > min_measure) replace_suffix(best->suffix, best->replacement);
  }

  void step1a() {
    if (ends("sses")) {
      replace_suffix("sses", "ss");
    } else if (ends("ies")) {
      replace_suffix("ies", "i");
    } else if (!ends("ss") && ends("s")) {
      b_.pop_back();
    }
  }

  void step1b() {
    if (ends("eed")) {
      if (measure(stem_len("eed")) > 0) b_.pop_back();
      return;
    }
    std::string_view removed;
    if (ends("ed") && has_vowel(stem_len("ed"))) {
      removed = "ed";
    } else if (ends("ing") && has_vowel(stem_len("ing"))) {
      removed = "ing";
    } else {
      return;
    }
    b_.erase(stem_len(removed));  // erase, not resize: GCC 12 -O2 misreads resize here (-Wstringop-overflow)
    if (ends("at") || ends("bl") || ends("iz")) {
      b_.push_back('e');
    } else if (double_consonant(b_.size())) {
      const char c = b_.back();
      if (c != 'l' && c != 's' && c != 'z') b_.pop_back();
    } else if (measure(b_.size()) == 1 && cvc(b_.size())) {
      b_.push_back('e');
    }
  }

  void step1c() {
    if (ends("y") && has_vowel(b_.size() - 1)) b_.back() = 'i';
  }

  void step2() {
    apply_longest({{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
                   {"bli", "ble"},     {"alli", "al"},     {"entli", "ent"}, {"eli", "e"},     {"ousli", "ous"},
                   {"ization", "ize"}, {"ation", "ate"},   {"ator", "ate"},  {"alism", "al"},  {"iveness", "ive"},
                   {"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"},  {"iviti", "ive"}, {"biliti", "ble"},
                   {"logi", "log"}},
                  0);
  }

  void step3() {
    apply_longest(
        {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""}},
        0);
  }

  void step4() {
    static constexpr std::string_view kSuffixes[] = {"al",  "ance",  "ence", "er",  "ic",  "able", "ible",
                                                     "ant", "ement", "ment", "ent", "ion", "ou",   "ism",
                                                     "ate", "iti",   "ous",  "ive", "ize"};
    std::string_view best;
    for (std::string_view s : kSuffixes)
      if (ends(s) && s.size() > best.size()) best = s;
    if (best.empty()) return;
    const std::size_t len = stem_len(best);
    if (best == "ion" && (len == 0 || (b_[len - 1] != 's' && b_[len - 1] != 't'))) return;
    if (measure(len) > 1) b_.resize(len);
  }

  void step5() {
    if (ends("e")) {
      const std::size_t len = b_.size() - 1;
      const int m = measure(len);
      if (m > 1 || (m == 1 && !cvc(len))) b_.pop_back();
    }
    if (measure(b_.size()) > 1 && double_consonant(b_.size()) && b_.back() == 'l') b_.pop_back();
  }

  std::string b_;
};

}  // namespace

std::string porter_stem(std::string_view lower_word) {
  for (char c : lower_word)
    if (c < 'a' || c > 'z') return std::string(lower_word);
  return PorterStemmer(lower_word).run();
}

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_word_char(text[i])) {
      ++i;
      continue;
    }
    Token t{std::string(), i, i};
    while (i < text.size()) {
      const char c = text[i];
      if (is_word_char(c)) {
        t.text.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
        ++i;
      } else if ((c == '\'' || text.substr(i, 3) == kTypographicApostrophe)) {
        // Only an apostrophe between two word characters belongs to the word.
        const std::size_t len = c == '\'' ? 1 : 3;
        if (i + len < text.size() && is_word_char(text[i + len])) {
          t.text.push_back('\'');
          i += len;
        } else {
          break;
        }
      } else {
        break;
      }
    }
    t.end = i;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (auto& t : tokenize(text)) out.push_back(std::move(t.text));
  return out;
}

bool is_stop_word(std::string_view lower_word) { return stop_words().count(lower_word) > 0; }

bool is_filler_word(std::string_view lower_word) { return filler_words().count(lower_word) > 0; }

bool is_weak_head(std::string_view lower_word) {
  if (weak_heads().count(lower_word)) return true;
  static const WordSet nouns_in_ly = {"family", "assembly", "butterfly", "monopoly", "anomaly", "supply", "italy"};
  if (lower_word.size() >= 6 && lower_word.ends_with("ly") && !nouns_in_ly.count(lower_word)) return true;
  // Participles ("mixed", "charged"); "speed", "breed" and "hundred" are nouns.
  return lower_word.size() >= 5 && lower_word.ends_with("ed") && !lower_word.ends_with("eed") &&
         lower_word != "hundred";
}

bool is_number_word(std::string_view lower_word) {
  static const WordSet numbers = {"one",      "two",     "three",   "four",     "five",     "six",       "seven",
                                  "eight",    "nine",    "ten",     "eleven",   "twelve",   "twenty",    "thirty",
                                  "forty",    "fifty",   "hundred", "hundreds", "thousand", "thousands", "million",
                                  "millions", "billion", "first",   "second",   "third",    "dozen",     "dozens"};
  return numbers.count(lower_word) > 0 || is_digits(lower_word);
}

bool is_digits(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_title_small_word(std::string_view lower_word) { return title_small_words().count(lower_word) > 0; }

std::string title_case(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.empty()) continue;
    const bool has_upper = to_lower(w) != w;
    const bool inner = i > 0 && i + 1 < words.size();
    if (!has_upper && !(inner && is_title_small_word(w)) && w[0] >= 'a' && w[0] <= 'z') {
      w[0] = static_cast<char>(w[0] - 'a' + 'A');
    }
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

std::string cut_at_word(std::string_view text, std::size_t max_bytes) {
  text = trim(text);
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Back up to a blank so that no word is cut; the character after the cut
  // must be a blank too, or the cut would fall inside the word.
  while (cut > 0 && text[cut] != ' ') --cut;
  std::string_view kept = cut > 0 ? text.substr(0, cut) : text.substr(0, max_bytes);
  if (cut == 0) {
    // One word longer than the limit: keep whole UTF-8 characters only.
    std::size_t n = kept.size();
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    kept = kept.substr(0, n);
  }
  std::string out(trim(kept, " \t\r\n,;:-"));
  return out;
}

}  // namespace scribe::enrichment
