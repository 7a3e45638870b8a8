#pragma once
#include <pqxx/pqxx>
#include <vector>

#include "eventstore/event.h"

namespace scribe::eventstore {

// What an event store runs inside every appending transaction, on the events
// just written and before the caller commits: the inline projections, which
// give commands read-your-writes. A store is handed its projector when it is
// built (EventStore's constructor) instead of finding one installed in the
// process, so a process that forgets a set-up call cannot append events its
// read models never see. The service's set lives in projections/
// (projections::inline_projections()), a layer above this one, which is why
// the store knows only this interface.
class InlineProjector {
 public:
  virtual ~InlineProjector() = default;
  // Called from any appending thread at once, so it keeps no mutable state.
  // Throwing rolls the append back; in a shared group-commit transaction the
  // other units are then written again without the failing one
  // (group_commit.cpp).
  virtual void project(pqxx::work& txn, const std::vector<RecordedEvent>& events) const = 0;
};

}  // namespace scribe::eventstore
