#include "domain/wallet.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/error.h"
#include "common/text.h"
#include "domain/events.h"

namespace scribe::wallet {

std::string month_of(TimePoint t) {
  std::time_t tt = static_cast<std::time_t>(to_unix_micros(t) / 1000000);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100);
  return buf;
}

money::Micros key_month_to_date(const account::State& s, int64_t key_id, TimePoint at) {
  auto it = s.key_spend.find({key_id, month_of(at)});
  money::Micros settled = it == s.key_spend.end() ? 0 : it->second;
  return settled + s.key_held(key_id);
}

std::vector<eventstore::NewEvent> place_hold(const account::State& s, const HoldRequest& req, TimePoint at) {
  if (!s.exists) throw Error::not_found("account");
  if (req.amount < 0) throw Error("internal_error", "negative hold");
  if (req.amount == 0) return {};
  if (s.open_holds.count(req.hold_id) || s.closed_holds.count(req.hold_id))
    // A programming error, never a client's: no internal identifier in the message.
    throw Error("internal_error", "this work already has a wallet hold; retry the request");
  if (s.available() < req.amount) {
    throw Error("insufficient_funds",
                "the wallet cannot cover this charge: " + format_number(money::to_usd(req.amount)) + " USD needed, " +
                    format_number(money::to_usd(std::max<money::Micros>(0, s.available()))) +
                    " USD available; top up the wallet",
                {{"charge_usd", money::to_usd(req.amount)},
                 {"available_usd", money::to_usd(std::max<money::Micros>(0, s.available()))}});
  }
  if (req.key_id && req.key_monthly_cap) {
    money::Micros spent = key_month_to_date(s, *req.key_id, at);
    if (spent + req.amount > *req.key_monthly_cap)
      throw Error("spend_cap_exceeded",
                  "this API key's monthly cap of " + format_number(money::to_usd(*req.key_monthly_cap)) +
                      " USD would be passed (month to date " + format_number(money::to_usd(spent)) + " USD)",
                  {{"charge_usd", money::to_usd(req.amount)},
                   {"monthly_cap_usd", money::to_usd(*req.key_monthly_cap)},
                   {"month_to_date_spend_usd", money::to_usd(spent)}});
  }
  Json d = {{"account_id", s.id},          {"hold_id", req.hold_id},
            {"amount_micros", req.amount}, {"key_id", req.key_id ? Json(*req.key_id) : Json(nullptr)},
            {"month", month_of(at)},       {"purpose", req.purpose}};
  for (auto& [k, v] : req.reference.items()) d[k] = v;
  return {{events::kWalletHoldPlaced, std::move(d)}};
}

std::vector<eventstore::NewEvent> settle_hold(const account::State& s, const std::string& hold_id, money::Micros charge,
                                              TimePoint at) {
  auto it = s.open_holds.find(hold_id);
  if (it == s.open_holds.end()) return {};
  money::Micros charged = std::clamp<money::Micros>(charge, 0, it->second.amount);
  const auto& h = it->second;
  return {{events::kWalletHoldSettled,
           {{"account_id", s.id},
            {"hold_id", hold_id},
            {"charged_micros", charged},
            {"released_micros", h.amount - charged},
            {"key_id", h.key_id ? Json(*h.key_id) : Json(nullptr)},
            {"hold_month", h.month},
            {"month", month_of(at)}}}};
}

std::vector<eventstore::NewEvent> release_hold(const account::State& s, const std::string& hold_id) {
  auto it = s.open_holds.find(hold_id);
  if (it == s.open_holds.end()) return {};
  const auto& h = it->second;
  return {{events::kWalletHoldReleased,
           {{"account_id", s.id},
            {"hold_id", hold_id},
            {"amount_micros", h.amount},
            {"key_id", h.key_id ? Json(*h.key_id) : Json(nullptr)},
            {"hold_month", h.month}}}};
}

}  // namespace scribe::wallet
