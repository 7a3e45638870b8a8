#pragma once
#include <optional>
#include <string>
#include <vector>

#include "domain/account.h"
#include "domain/transcription.h"

// What a transcription is charged follows the length the worker measured,
// not the length the client declared. The worker decodes the recording,
// then (before any recognition work) asks this decision to make the
// attempt's hold cover the measured length:
//  - no longer than what is held (within kToleranceSeconds): nothing moves
//    now; completion settles at the measured length and releases the rest;
//  - longer: the hold is replaced by one for the measured length, with the
//    same checks as a create (wallet funds, the key's monthly cap, the
//    request's max_charge_usd, the pay-as-you-go fair-use wall);
//  - when one of those refuses, the attempt fails with that check's code
//    (insufficient_funds, spend_cap_exceeded, max_charge_exceeded,
//    rate_limited) and its hold is released: nothing is charged for work not
//    done.
// The fair-use window counts the measured seconds from then on. The decision
// is taken once per attempt: a worker that measures again after a crash finds
// the attempt measured and changes nothing.
namespace scribe::measurement {

// Decoders and containers disagree by a fraction of a second; a recording
// at most this much longer than the hold is charged at the held length.
inline constexpr int64_t kToleranceSeconds = 1;

enum class Outcome {
  AlreadyMeasured,  // nothing to append
  Measured,         // go on recognizing
  Refused,          // the attempt failed; stop
};

struct Decision {
  Outcome outcome = Outcome::AlreadyMeasured;
  std::vector<eventstore::NewEvent> transcription_events;
  std::vector<eventstore::NewEvent> account_events;
  std::string code;  // when refused
};

// `tr` is the transcription at its current attempt, in processing; `acc` its
// account. Pure: reads nothing but its arguments.
Decision decide(const transcription::State& tr, const account::State& acc, double measured_seconds, TimePoint at);

// The hold of an attempt whose measured length outgrew the first hold.
std::string measured_hold_id(int64_t transcription_id, int attempt);

}  // namespace scribe::measurement
