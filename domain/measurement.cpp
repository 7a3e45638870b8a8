#include "domain/measurement.h"

#include "common/error.h"
#include "domain/events.h"
#include "domain/fair_use.h"
#include "domain/pricing.h"
#include "domain/wallet.h"

namespace scribe::measurement {
namespace {

eventstore::NewEvent measured_event(const transcription::State& tr, double seconds, int64_t billed, money::Micros held,
                                    const std::optional<std::string>& hold) {
  return {events::kTranscriptionMeasured,
          {{"transcription_id", tr.id},
           {"attempt", tr.attempt},
           {"duration_seconds", seconds},
           {"billed_seconds", billed},
           {"charge_micros", held},
           {"hold_id", hold ? Json(*hold) : Json(nullptr)}}};
}

eventstore::NewEvent corrected_event(const transcription::State& tr, int64_t billed) {
  return {events::kAcceptedSecondsCorrected,
          {{"account_id", tr.account_id},
           {"transcription_id", tr.id},
           {"attempt", tr.attempt},
           {"billed_seconds", billed},
           {"previous_billed_seconds", tr.billed_seconds}}};
}

std::string seconds_text(int64_t s) { return std::to_string(s) + " s"; }

}  // namespace

std::string measured_hold_id(int64_t transcription_id, int attempt) {
  return transcription::hold_id(transcription_id, attempt) + "-measured";
}

Decision decide(const transcription::State& tr, const account::State& acc, double measured_seconds, TimePoint at) {
  Decision d;
  if (tr.measured_seconds) return d;
  const auto price = pricing::quote(measured_seconds, acc.plan);
  std::optional<std::string> hold = tr.hold;
  money::Micros held = tr.last_charge;
  if (price.billed_seconds > tr.billed_seconds + kToleranceSeconds) {
    try {
      if (tr.max_charge && price.charge > *tr.max_charge)
        throw Error("max_charge_exceeded", "the charge for the measured length is above max_charge_usd",
                    {{"charge_usd", money::to_usd(price.charge)}, {"max_charge_usd", money::to_usd(*tr.max_charge)}});
      fair_use::check(acc, price.billed_seconds - tr.billed_seconds, at);
      if (price.charge > held) {
        // One hold per attempt: the first is released and a larger one placed,
        // both decided on the account state, so the funds and the key's cap
        // are checked against everything else in flight.
        account::State after = acc;
        std::optional<int64_t> key = tr.key_id;
        if (hold) {
          if (auto it = acc.open_holds.find(*hold); it != acc.open_holds.end()) key = it->second.key_id;
          for (auto& e : wallet::release_hold(acc, *hold)) {
            account::apply(after, e.type, e.data);
            d.account_events.push_back(std::move(e));
          }
        }
        std::optional<money::Micros> cap;
        if (key)
          if (auto k = acc.keys.find(*key); k != acc.keys.end()) cap = k->second.monthly_cap;
        const std::string bigger = measured_hold_id(tr.id, tr.attempt);
        for (auto& e : wallet::place_hold(
                 after, {bigger, price.charge, key, cap, "transcription", {{"transcription_id", tr.id}}}, at))
          d.account_events.push_back(std::move(e));
        hold = bigger;
        held = price.charge;
      }
    } catch (const Error& refusal) {
      // Nothing recognized yet: the attempt fails and nothing is charged.
      d.outcome = Outcome::Refused;
      d.code = refusal.code();
      d.account_events.clear();
      if (tr.hold)
        for (auto& e : wallet::release_hold(acc, *tr.hold)) d.account_events.push_back(std::move(e));
      d.account_events.push_back(corrected_event(tr, 0));
      d.transcription_events.push_back(measured_event(tr, measured_seconds, price.billed_seconds, 0, std::nullopt));
      d.transcription_events.push_back(
          {events::kTranscriptionFailed,
           {{"transcription_id", tr.id},
            {"attempt", tr.attempt},
            {"charge_micros", 0},
            {"error",
             {{"code", refusal.code()},
              {"message", "the recording is " + seconds_text(price.billed_seconds) + " long, more than the " +
                              seconds_text(tr.billed_seconds) + " declared, and covering it was refused: " +
                              refusal.message() + ". Nothing was charged; retry once that is resolved"}}}}});
      return d;
    }
  }
  d.outcome = Outcome::Measured;
  if (price.billed_seconds != tr.billed_seconds) d.account_events.push_back(corrected_event(tr, price.billed_seconds));
  d.transcription_events.push_back(measured_event(tr, measured_seconds, price.billed_seconds, held, hold));
  return d;
}

}  // namespace scribe::measurement
