#include "domain/account.h"

#include "common/error.h"
#include "domain/events.h"
#include "domain/limits.h"

namespace scribe::account {

std::string stream_id(int64_t account_id) { return "account-" + std::to_string(account_id); }

int State::active_keys(TimePoint at) const {
  int n = 0;
  for (const auto& [id, k] : keys)
    if (!k.revoked && (!k.expires_at || *k.expires_at > at)) ++n;
  return n;
}

money::Micros State::held() const {
  money::Micros total = 0;
  for (const auto& [id, h] : open_holds) total += h.amount;
  return total;
}

money::Micros State::key_held(int64_t key_id) const {
  money::Micros total = 0;
  for (const auto& [id, h] : open_holds)
    if (h.key_id == key_id) total += h.amount;
  return total;
}

int64_t State::accepted_seconds_since(TimePoint since) const {
  int64_t total = 0;
  for (const auto& a : accepted)
    if (a.at > since) total += a.billed_seconds;
  return total;
}

namespace {
std::optional<int64_t> optional_key(const Json& d) {
  if (!d.contains("key_id") || d.at("key_id").is_null()) return std::nullopt;
  return d.at("key_id").get<int64_t>();
}
}  // namespace

void apply(State& s, const std::string& type, const Json& d) {
  if (type == events::kAccountOpened) {
    s.exists = true;
    s.id = d.at("account_id").get<int64_t>();
    s.email = d.at("email").get<std::string>();
    s.plan = plans::parse(d.at("plan").get<std::string>()).value_or(plans::Tier::Free);
  } else if (type == events::kPlanChanged) {
    s.plan = plans::parse(d.at("to").get<std::string>()).value_or(s.plan);
  } else if (type == events::kWalletDeposited) {
    s.balance += d.at("amount_micros").get<int64_t>();
  } else if (type == events::kApiKeyCreated) {
    KeyState k;
    k.id = d.at("key_id").get<int64_t>();
    k.permission = apikey::parse_permission(d.at("permission").get<std::string>()).value_or(apikey::Permission::Full);
    if (!d.at("monthly_cap_micros").is_null()) k.monthly_cap = d.at("monthly_cap_micros").get<int64_t>();
    if (!d.at("expires_at").is_null()) k.expires_at = parse_iso8601(d.at("expires_at").get<std::string>());
    s.keys[k.id] = k;
  } else if (type == events::kApiKeyRevoked) {
    auto it = s.keys.find(d.at("key_id").get<int64_t>());
    if (it != s.keys.end()) it->second.revoked = true;
  } else if (type == events::kWalletHoldPlaced) {
    s.open_holds[d.at("hold_id").get<std::string>()] =
        Hold{d.at("amount_micros").get<int64_t>(), optional_key(d), d.at("month").get<std::string>(),
             d.value("purpose", "transcription")};
  } else if (type == events::kWalletHoldSettled) {
    auto id = d.at("hold_id").get<std::string>();
    auto charged = d.at("charged_micros").get<int64_t>();
    s.open_holds.erase(id);
    s.closed_holds[id] = true;
    s.balance -= charged;
    if (auto k = optional_key(d)) s.key_spend[{*k, d.at("month").get<std::string>()}] += charged;
  } else if (type == events::kClipAccepted) {
    if (d.value("video_download", false))
      if (auto at = parse_iso8601(d.at("accepted_at").get<std::string>())) s.video_downloads.push_back(*at);
  } else if (type == events::kTranscriptionAccepted) {
    if (auto at = parse_iso8601(d.at("accepted_at").get<std::string>()))
      s.accepted.push_back(
          {*at, d.at("billed_seconds").get<int64_t>(), d.value("transcription_id", int64_t{0}), d.value("attempt", 0)});
  } else if (type == events::kAcceptedSecondsCorrected) {
    const auto tid = d.at("transcription_id").get<int64_t>();
    const int attempt = d.at("attempt").get<int>();
    for (auto& a : s.accepted)
      if (a.transcription_id == tid && a.attempt == attempt) a.billed_seconds = d.at("billed_seconds").get<int64_t>();
  } else if (type == events::kWalletHoldReleased) {
    auto id = d.at("hold_id").get<std::string>();
    s.open_holds.erase(id);
    s.closed_holds[id] = true;
  }
}

State fold(const std::vector<eventstore::RecordedEvent>& events) { return eventstore::fold<State>(events, apply); }

std::vector<eventstore::NewEvent> open(int64_t account_id, const std::string& email, plans::Tier plan) {
  if (email.empty() || email.size() > 254 || email.find('@') == std::string::npos)
    throw Error::invalid("email", "email must be an address such as name@example.com");
  return {{events::kAccountOpened, {{"account_id", account_id}, {"email", email}, {"plan", plans::name(plan)}}}};
}

std::vector<eventstore::NewEvent> deposit(const State& s, money::Micros amount, const std::string& reference) {
  if (!s.exists) throw Error::not_found("account");
  if (amount <= 0) throw Error::invalid("amount", "a top-up must be a positive amount");
  return {{events::kWalletDeposited, {{"account_id", s.id}, {"amount_micros", amount}, {"reference", reference}}}};
}

std::vector<eventstore::NewEvent> change_plan(const State& s, plans::Tier to) {
  if (!s.exists) throw Error::not_found("account");
  if (s.plan == to) return {};
  return {{events::kPlanChanged, {{"account_id", s.id}, {"from", plans::name(s.plan)}, {"to", plans::name(to)}}}};
}

std::vector<eventstore::NewEvent> create_key(const State& s, const NewKey& k, TimePoint at) {
  if (!s.exists) throw Error::not_found("account");
  if (s.active_keys(at) >= limits::kMaxActiveApiKeys)
    throw Error::invalid("api_keys", "an account may have at most " + std::to_string(limits::kMaxActiveApiKeys) +
                                         " active API keys; revoke one first");
  if (k.name.empty() || k.name.size() > limits::kApiKeyNameMaxLength)
    throw Error::invalid("name", "key name must be 1-" + std::to_string(limits::kApiKeyNameMaxLength) + " characters");
  if (k.monthly_cap && *k.monthly_cap < 0) throw Error::invalid("monthly_cap", "monthly cap must be >= 0");
  if (k.expires_at && *k.expires_at <= at) throw Error::invalid("expires_at", "expiry must be in the future");
  if (k.permission == apikey::Permission::Agent && (!k.monthly_cap || !k.expires_at))
    throw Error::invalid("permission", "the agent preset needs a monthly cap and an expiry");
  Json d = {{"account_id", s.id},
            {"key_id", k.key_id},
            {"name", k.name},
            {"key_hash", k.key_hash},
            {"key_prefix", k.key_prefix},
            {"permission", apikey::permission_name(k.permission)},
            {"monthly_cap_micros", k.monthly_cap ? Json(*k.monthly_cap) : Json(nullptr)},
            {"expires_at", k.expires_at ? Json(to_iso8601(*k.expires_at)) : Json(nullptr)}};
  return {{events::kApiKeyCreated, std::move(d)}};
}

std::vector<eventstore::NewEvent> revoke_key(const State& s, int64_t key_id) {
  auto it = s.keys.find(key_id);
  if (!s.exists || it == s.keys.end()) throw Error::not_found("API key");
  if (it->second.revoked) return {};  // revoking twice changes nothing
  return {{events::kApiKeyRevoked, {{"account_id", s.id}, {"key_id", key_id}}}};
}

}  // namespace scribe::account
