#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

// The draft text of a transcription while it runs. The recognizer decodes
// the recording's pieces of speech in parallel, so they finish in any order;
// a piece's text is published once it and every piece before it are
// recognized, so a reader (a stream of POST /v1/audio/transcriptions) gets
// the recording's text in order, each piece once. It is a draft: once the
// voices are told apart the transcript's sentences are rebuilt across
// pieces, so the final text has the same words, cased, punctuated and split
// into sentences anew.
namespace scribe::draft {

// A finished transcription's draft is kept this long, so that a stream woken
// late (a missed notification is caught by its next 15 s look) still reads
// every piece in order before the final text; housekeeping then deletes it.
inline constexpr int kKeepSecondsAfterFinish = 600;

struct Piece {
  int index = 0;  // the piece's place in the recording, from 0
  double start_seconds = 0;
  double end_seconds = 0;
  std::string text;  // empty when no words were recognized in it

  bool operator==(const Piece&) const = default;
};

// Releases the pieces of one recording in order. Not thread-safe: the
// recognizer's threads report under one lock.
class InOrder {
 public:
  explicit InOrder(std::size_t count);
  // Piece `piece.index` is recognized. Returns what may be published now, in
  // order: nothing while an earlier piece is missing, else this piece and
  // the recognized pieces after it up to the next one missing. A piece
  // reported again, or an index outside the recording, releases nothing.
  std::vector<Piece> done(Piece piece);
  // How many pieces have been released (all of them: count()).
  std::size_t released() const { return next_; }
  std::size_t count() const { return waiting_.size(); }

 private:
  std::vector<std::optional<Piece>> waiting_;
  std::vector<bool> reported_;
  std::size_t next_ = 0;
};

}  // namespace scribe::draft
