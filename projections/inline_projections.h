#pragma once
#include <memory>

#include "eventstore/inline_projector.h"

namespace scribe::projections {

// The service's inline projections as an event store runs them: every inline
// projection of all(), in that order, inside the appending transaction, after
// taking the shared inline lock that a rebuild of an inline projection takes
// exclusively (runner.cpp), so no append interleaves with a rebuild. Every
// process that appends builds its store with it:
//   eventstore::EventStore store(projections::inline_projections());
// One instance (it keeps no state) serves any number of stores and threads.
std::shared_ptr<const eventstore::InlineProjector> inline_projections();

}  // namespace scribe::projections
