#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace scribe::plans {

enum class Tier { Free, Starter, Pro, Business, Enterprise };

// The spec's per-plan processing limits. `free` is pay-as-you-go.
struct PlanLimits {
  std::optional<int> max_concurrent_jobs;  // nullopt: no cap (wallet limits)
  int max_file_minutes;
  std::optional<int> fair_use_minutes_per_6h;  // nullopt: custom (enterprise)
  bool pay_as_you_go;
  // Jobs an account may have waiting for a worker before creation is refused
  // with 429 queue_full; nullopt: no backlog limit (pay-as-you-go).
  std::optional<int> max_queued;
};

std::optional<Tier> parse(std::string_view name);
std::string_view name(Tier t);
PlanLimits limits_of(Tier t);

}  // namespace scribe::plans
