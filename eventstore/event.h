#pragma once
#include <cstdint>
#include <string>

#include "common/json.h"

namespace scribe::es {

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

}  // namespace scribe::es
