#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "domain/transcript_artifact.h"

// A transcript read once for every enrichment step: each word tokenized,
// classified (stop word, filler, content) and stemmed, each segment split into
// its sentences, and corpus-wide statistics (inverse document frequency over
// segments, how each word is written). Everything after this works on integer
// ids, which is what keeps a 12-hour transcript within seconds.
namespace scribe::enrichment {

struct CorpusWord {
  int term = -1;    // id of the content stem, or -1 for stop words, fillers and single letters
  int form = 0;     // id of the lower-case word as written ("holes")
  int segment = 0;  // index of the segment it is in
  bool stop = false;
  bool filler = false;
  bool phrase_start = false;   // first of its sentence, or after punctuation: no phrase runs across
  bool hyphen_before = false;  // "well-known": joined to the previous word by a hyphen
};

// A sentence of one segment: a verbatim slice of the segment's text, from its
// first word to its final punctuation.
struct CorpusSentence {
  int segment = 0;
  std::size_t begin = 0;  // bytes in the segment's text
  std::size_t end = 0;
  int first_word = 0;  // [first_word, end_word) in Corpus::words
  int end_word = 0;
  bool question = false;  // ends with '?'
};

// How titles and questions weigh the words they are made of, beyond the
// transcript's text. Everything is on by default; the title benchmark turns
// it off to measure the titles of before (bench/title_quality_benchmark.cpp),
// and chose the numbers on its tune set.
struct LabelOptions {
  // WordNet's parts of speech (lexicon/wordnet.h): a word WordNet knows only
  // as a verb, adjective or adverb ("knead", "stretched") is no noun
  // whatever its context says: its noun factor is scaled by noun_floor. A
  // word with a noun sense among others ("orbit", "sail") keeps what its
  // context says: scaling by the share of noun senses lowered such topic
  // words and lost titles on the tune set.
  bool parts_of_speech = true;
  double noun_floor = 0.3;
  // The recognizer's confidence in the word (its lattice posterior: what is
  // left after the alternates it almost heard): a form heard with a mean
  // confidence below sure_confidence is probably misheard ("coral" written
  // as "carl") and is weighed down, to at least heard_floor, wherever a
  // title or a question would be made of it.
  bool confidence = true;
  double sure_confidence = 0.4;
  double heard_floor = 0.3;
  // A title is a noun phrase ("Sourdough Starter") rather than two
  // keyphrases joined ("Starter and Baker"): when the best keyphrase is one
  // word, a phrase of two words or more headed by it, whose modifiers may
  // stand before a head (Corpus::modifier) and that scores at least this
  // share of it comes first (enrichment::keyphrases); 2 turns it off.
  double phrase_share = 0.3;
};

// Contiguous segments [first, end).
struct Span {
  int first = 0;
  int end = 0;
  bool empty() const { return end <= first; }
};

class Corpus {
 public:
  // Keeps a reference to `t`, which must outlive the corpus.
  explicit Corpus(const transcript::TranscriptArtifact& t, const LabelOptions& labeling = {});
  explicit Corpus(transcript::TranscriptArtifact&&) = delete;
  Corpus(const Corpus&) = delete;
  Corpus& operator=(const Corpus&) = delete;

  const transcript::TranscriptArtifact& transcript() const { return t_; }
  int segment_count() const { return static_cast<int>(t_.segments.size()); }
  const transcript::ArtifactSegment& segment(int i) const { return t_.segments[i]; }
  // The end of the recording: its duration, or the last segment's end when later.
  double recording_end() const { return recording_end_; }

  const std::vector<CorpusWord>& words() const { return words_; }
  // Words of segment i: [segment_word_begin(i), segment_word_begin(i + 1)).
  int segment_word_begin(int i) const { return segment_words_[i]; }
  int span_word_begin(const Span& s) const { return segment_words_[s.first]; }
  int span_word_end(const Span& s) const { return segment_words_[s.end]; }

  const std::vector<CorpusSentence>& sentences() const { return sentences_; }
  int segment_sentence_begin(int i) const { return segment_sentences_[i]; }
  int span_sentence_begin(const Span& s) const { return segment_sentences_[s.first]; }
  int span_sentence_end(const Span& s) const { return segment_sentences_[s.end]; }
  std::string_view sentence_text(const CorpusSentence& s) const;

  int term_count() const { return static_cast<int>(idf_.size()); }
  // log(1 + segments / segments containing the term): rare terms weigh more.
  double idf(int term) const { return idf_[term]; }
  // Occurrences of the term in the whole transcript.
  int term_frequency(int term) const { return term_frequency_[term]; }
  const std::string& stem(int term) const { return stems_[term]; }
  // The term id of a stem, or -1 when the transcript never has it.
  int find_stem(const std::string& stem) const;

  const std::string& form(int id) const { return forms_[id]; }
  // The content term of a form, -1 for stop words and fillers.
  int form_term(int form) const { return form_term_[form]; }
  // How the word is written inside a title: as it is written mid-sentence
  // when it is capitalized there consistently ("NASA", "Paris"), else lower-case.
  const std::string& display(int form) const { return display_[form]; }
  // Capitalized mid-sentence consistently: a name, a place, an acronym.
  bool proper(int form) const { return proper_[form]; }
  // How much the word behaves like a noun, 0.35..1.5 (1 when nothing is
  // known): raised when it follows a determiner ("the magma"), lowered when it
  // follows a pronoun, "to" or a modal ("they move", "to open"). Titles and
  // questions read best around nouns, and no tagger is at hand.
  // Multiplied by LabelOptions::noun_floor when WordNet knows the word but
  // not as a noun.
  double noun_factor(int form) const;
  // The same over every form of a term ("stay", "stays", "staying").
  double term_noun_factor(int term) const;
  // How surely the recognizer heard the form, heard_floor..1 (LabelOptions);
  // 1 when the transcript carries no confidences.
  double heard_factor(int form) const { return heard_[form]; }
  // May the form stand before a title's head ("Worker Bees", "Sticky
  // Magma")? Not a comparative or superlative ("Easier Week", "Longest
  // Journey"), a number ("Two Needles"), a plural noun ("Walls Climber") or
  // a word that is neither noun nor adjective; all of which WordNet tells,
  // so always true with parts_of_speech off.
  bool modifier(int form) const { return modifier_[form]; }
  const LabelOptions& label_options() const { return labeling_; }

 private:
  void read_segment(int index);
  void finish_forms();

  const transcript::TranscriptArtifact& t_;
  double recording_end_ = 0;
  std::vector<CorpusWord> words_;
  std::vector<int> segment_words_;
  std::vector<CorpusSentence> sentences_;
  std::vector<int> segment_sentences_;
  std::vector<std::string> stems_;
  std::vector<double> idf_;
  std::vector<int> term_frequency_;
  std::vector<int> term_last_segment_;  // for document frequency while reading
  std::vector<int> document_frequency_;
  std::vector<std::string> forms_;
  std::vector<int> form_term_;
  std::vector<std::string> display_;
  std::vector<bool> proper_;
  std::vector<int> form_count_;
  std::vector<int> after_determiner_;
  std::vector<int> after_verb_cue_;
  std::vector<int> term_after_determiner_;
  std::vector<int> term_after_verb_cue_;
  LabelOptions labeling_;
  std::vector<double> lexical_noun_;       // per form: WordNet's scale of its noun factor
  std::vector<double> term_lexical_noun_;  // per term: the largest of its forms'
  std::vector<double> heard_;              // per form: heard_factor
  std::vector<bool> modifier_;             // per form: modifier
  std::vector<double> confidence_sum_;     // while reading: per form
  std::vector<int> confidence_count_;
  // While reading: per form, mid-sentence occurrences and how many of them
  // were capitalized, and the last capitalized spelling seen.
  std::vector<int> mid_count_;
  std::vector<int> mid_upper_count_;
  std::vector<std::string> upper_spelling_;
  std::unordered_map<std::string, int> stem_ids_;
  std::unordered_map<std::string, int> form_ids_;
};

// The sentences of `text` as byte ranges [begin, end): split after '.', '?',
// '!' or '…' (and closing quotes) when a blank follows and the next word does
// not start lower-case, except after titles and initials ("Dr.", "J.").
std::vector<std::pair<std::size_t, std::size_t>> split_sentences(std::string_view text);

}  // namespace scribe::enrichment
