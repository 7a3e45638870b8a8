#include "domain/transcript_draft.h"

namespace scribe::draft {

InOrder::InOrder(std::size_t count) : waiting_(count), reported_(count, false) {}

std::vector<Piece> InOrder::done(Piece piece) {
  std::vector<Piece> out;
  if (piece.index < 0 || static_cast<std::size_t>(piece.index) >= waiting_.size()) return out;
  const auto at = static_cast<std::size_t>(piece.index);
  if (reported_[at]) return out;
  reported_[at] = true;
  waiting_[at] = std::move(piece);
  // Only the piece that completes the run in front releases anything: a
  // later one waits in place for the pieces before it.
  while (next_ < waiting_.size() && waiting_[next_]) {
    out.push_back(std::move(*waiting_[next_]));
    waiting_[next_].reset();
    ++next_;
  }
  return out;
}

}  // namespace scribe::draft
