#pragma once
#include <optional>
#include <string>
#include <vector>

#include "domain/account.h"

// Wallet holds: money is reserved when work is accepted, then settled
// (charged) or released exactly once. Every decision reads the account state
// folded from its own stream, so two concurrent requests cannot both spend
// the last dollar: the second append fails its expected-version check and is
// decided again on the new state.
namespace scribe::wallet {

// "YYYY-MM" of a time, UTC: the month a key's cap counts against.
std::string month_of(TimePoint t);

struct HoldRequest {
  std::string hold_id;  // unique per piece of work, e.g. "transcription-12-1"
  money::Micros amount = 0;
  std::optional<int64_t> key_id;
  std::optional<money::Micros> key_monthly_cap;
  std::string purpose;              // "transcription", "clip", ...
  Json reference = Json::object();  // e.g. {"transcription_id": 12}
};

// Refuses with 402 insufficient_funds when the available balance (balance
// minus open holds) cannot cover the amount, and with 402 spend_cap_exceeded
// when settled month spend + in-flight holds + the amount would pass the key's
// cap. A zero amount places no hold and returns no event.
std::vector<eventstore::NewEvent> place_hold(const account::State& s, const HoldRequest& req, TimePoint at);

// Charges `charge` (at most the held amount) and releases the rest. A hold
// already closed yields no events: settling twice is impossible.
std::vector<eventstore::NewEvent> settle_hold(const account::State& s, const std::string& hold_id, money::Micros charge,
                                              TimePoint at);
std::vector<eventstore::NewEvent> release_hold(const account::State& s, const std::string& hold_id);

// Settled spend of a key in the month of `at` plus its holds in flight.
money::Micros key_month_to_date(const account::State& s, int64_t key_id, TimePoint at);

}  // namespace scribe::wallet
