#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"

namespace scribe::eventstore {

// Where an event stands in the global order: the appending transaction's id,
// then the position drawn inside it. Ordered lexicographically.
struct GlobalPosition {
  uint64_t tx = 0;
  int64_t position = 0;
  auto operator<=>(const GlobalPosition&) const = default;
  bool operator==(const GlobalPosition&) const = default;
};

// An event before it is appended.
struct NewEvent {
  std::string type;
  Json data = Json::object();
  Json metadata = Json::object();
};

struct RecordedEvent {
  GlobalPosition global;
  std::string stream_id;
  int64_t version = 0;
  std::string type;
  Json data;
  Json metadata;
  std::string recorded_at;  // ISO 8601 as PostgreSQL renders it
};

// Expected version of a stream at append time.
struct ExpectedVersion {
  int64_t value;
  static ExpectedVersion any() { return {-2}; }
  static ExpectedVersion no_stream() { return {-1}; }
  static ExpectedVersion exact(int64_t v) { return {v}; }
};

// Folds a stream into an aggregate's state with its `apply(state, type, data)`,
// recording the version reached (the expected version of the next append).
template <typename State, typename Apply>
State fold(const std::vector<RecordedEvent>& events, Apply apply) {
  State s;
  for (const auto& e : events) {
    apply(s, e.type, e.data);
    s.version = e.version;
  }
  return s;
}

}  // namespace scribe::eventstore
