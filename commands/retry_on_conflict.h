#pragma once
#include "common/error.h"
#include "eventstore/event_store.h"

// The bounded retry of a command whose append lost a race. `attempt` reads,
// decides and appends at the versions it read; a ConcurrencyError means
// another command appended to one of those streams first, so the decision is
// made again on the new state. Past kMaxConflictRetries the command answers
// 500 internal_error with `busy` (safe to retry). Any other error passes
// through at once: only a lost race is retried.
namespace scribe::commands {

inline constexpr int kMaxConflictRetries = 50;

template <class Attempt>
auto retry_on_conflict(Attempt&& attempt, const char* busy) -> decltype(attempt()) {
  for (int tries = 1;; ++tries) {
    try {
      return attempt();
    } catch (const eventstore::ConcurrencyError&) {
      if (tries >= kMaxConflictRetries) throw Error("internal_error", busy);
    }
  }
}

}  // namespace scribe::commands
