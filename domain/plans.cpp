#include "domain/plans.h"

#include "domain/limits.h"

namespace scribe::plans {

std::optional<Tier> parse(std::string_view n) {
  if (n == "free" || n == "payg" || n == "pay_as_you_go") return Tier::Free;
  if (n == "starter") return Tier::Starter;
  if (n == "pro") return Tier::Pro;
  if (n == "business") return Tier::Business;
  if (n == "enterprise") return Tier::Enterprise;
  return std::nullopt;
}

std::string_view name(Tier t) {
  switch (t) {
    case Tier::Free:
      return "free";
    case Tier::Starter:
      return "starter";
    case Tier::Pro:
      return "pro";
    case Tier::Business:
      return "business";
    case Tier::Enterprise:
      return "enterprise";
  }
  return "free";
}

PlanLimits limits_of(Tier t) {
  switch (t) {
    case Tier::Free:
      return {std::nullopt, 90, 60, true, std::nullopt};
    case Tier::Starter:
      return {1, 120, 120, false, 10};
    case Tier::Pro:
      return {3, 300, 360, false, 30};
    case Tier::Business:
      return {15, 600, 1200, false, 150};
    // Enterprise files may be as long as the platform takes any file.
    case Tier::Enterprise:
      return {50, limits::kPlatformMaxFileMinutes, std::nullopt, false, 500};
  }
  return {std::nullopt, 90, 60, true, std::nullopt};
}

}  // namespace scribe::plans
