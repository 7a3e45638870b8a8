#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Answers to a question from the segments retrieval found (POST .../ask and
// POST /api/v1/ask): Okapi BM25 over segments, scores pooled over a short
// window of neighbouring speech, a calibrated "nothing relevant" decision,
// and an extractive answer whose every claim is a verbatim transcript
// sentence followed by its [N] marker. Pure: the database side
// (api/ask_retrieval.h) hands in the segments and the collection's counts.
namespace scribe::enrichment {

// A segment as retrieval reads it: its lexemes (PostgreSQL's English
// stemmer, as `to_tsvector('english', text)` gives them) with their counts.
struct AskSegment {
  int64_t segment_id = 0;
  int64_t transcription_id = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  std::string text;
  std::vector<std::pair<std::string, int>> terms;  // lexeme and its count, by lexeme
  int length = 0;                                  // lexemes in the segment, counted with repeats
  // What the recognizer almost heard here (its lattice's alternates within
  // the segment's time): lexeme and summed posterior, by lexeme. Never shown.
  std::vector<std::pair<std::string, double>> heard;
};

// How a question term met a segment: as written, as a word the recognizer
// almost heard there, as a word that sounds like it, or as one that means
// the same (docs/heard_matching.md).
enum class Match { text, alternate, sound_alike, meaning_alike };
const char* match_name(Match m);

// Another form of a question term: its lexeme and how much a match of it
// counts against a match of the term itself (0..1).
struct TermVariant {
  std::string lexeme;
  double factor = 0;
  Match how = Match::sound_alike;
};

// A question term with the forms it may take in the transcript.
struct QueryTerm {
  std::string lexeme;
  std::vector<TermVariant> variants;
};

// "'bee':1,4 'hive':2" (a tsvector's text form) -> {{"bee",2},{"hive",1}},
// sorted by lexeme; lexemes without positions count once. `length` gets the
// sum of the counts.
std::vector<std::pair<std::string, int>> parse_tsvector(std::string_view text, int* length = nullptr);

// The collection the scores are relative to: every segment in the ask's
// scope (one transcription, or the library's transcriptions).
struct Collection {
  double segments = 0;
  double average_length = 0;
  // Document frequencies known beforehand (the library ask counts those of
  // terms too common to fetch every segment of); any other term's is counted
  // in the segments handed in.
  std::map<std::string, double> document_frequency;
};

// What the question asks about: its lexemes (`to_tsvector('english', q)`),
// without the words every question about a recording uses ("say", "talk",
// "mention", "recording", ...), each once.
std::vector<std::string> query_terms(const std::vector<std::string>& question_lexemes);

struct AskOptions {
  int top_k = 60;  // segments the answer may be drawn from (after ranking)
  int max_citations = 3;
};

// The segment that follows `s` in its recording, if any (the database side
// reads it). A moment that is itself a question ("What about drinking
// water?") is where the question was asked, not answered: the answer is
// what comes next, so the citation moves there when it starts within
// kAnswerFollowsMs of the question's end.
using NextSegment = std::function<std::optional<AskSegment>(const AskSegment& s)>;
inline constexpr int64_t kAnswerFollowsMs = 15'000;

struct AnswerCitation {
  int marker = 0;       // [marker] in the answer
  std::size_t segment;  // index into the segments handed in
  std::string quote;    // verbatim text of that segment (cut at a word when long)
};

struct Answer {
  bool no_answer = true;
  std::string answer;
  std::vector<AnswerCitation> citations;
  double confidence = 0;  // the best window's share of the query's weight, 0..1
};

// `segments` must hold every segment of the scope that contains at least one
// of `terms` (the others score 0); their order does not matter.
// Citations that moved to a following segment point into `extra` (their
// `segment` index is segments.size() + i); the caller reads a cited segment
// with cited_segment().
struct Cited {
  std::vector<AskSegment> extra;
};
Answer answer_question(const std::vector<QueryTerm>& terms, const std::vector<AskSegment>& segments,
                       const Collection& collection, const AskOptions& options, const NextSegment& next = nullptr,
                       Cited* cited = nullptr);
// Terms as written, without variants.
std::vector<QueryTerm> plain_terms(const std::vector<std::string>& lexemes);
const AskSegment& cited_segment(const std::vector<AskSegment>& segments, const Cited& cited, std::size_t index);

// The "nothing relevant" threshold on Answer::confidence, chosen on the tune
// set of bench/ask_eval (see its README).
double no_answer_threshold();

}  // namespace scribe::enrichment
