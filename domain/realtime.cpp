#include "domain/realtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/crypto.h"
#include "common/error.h"
#include "common/text.h"
#include "domain/events.h"
#include "domain/pricing.h"

namespace scribe::realtime {
namespace {

std::optional<int64_t> optional_key(const Json& d) {
  if (!d.contains("key_id") || d.at("key_id").is_null()) return std::nullopt;
  return d.at("key_id").get<int64_t>();
}

}  // namespace

std::string new_session_id() { return "rt_" + crypto::random_hex(12); }

bool is_session_id(std::string_view s) {
  if (s.size() != 27 || s.substr(0, 3) != "rt_") return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string hold_id(const std::string& session_id) { return "realtime-" + session_id; }

std::string piece_key(const std::string& session_id, int64_t seq, int generation) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08lld", static_cast<long long>(seq));
  return "realtime/" + session_id + "/" + buf + (generation > 1 ? "-" + std::to_string(generation) : "") + ".pcm";
}

const std::vector<std::string>& languages() {
  // The streaming recognizer runs the standard pipeline's US English model
  // (domain/pipelines.cpp): "auto" resolves to it.
  static const std::vector<std::string> list = {"auto", "en"};
  return list;
}

Request parse_request(const Json& body, bool realtime_enabled) {
  if (!body.is_null() && !body.is_object()) throw Error::invalid("body", "the body must be a JSON object");
  Request r;
  if (body.is_object() && body.contains("language") && !body.at("language").is_null()) {
    const Json& l = body.at("language");
    if (!l.is_string()) throw Error::invalid("language", "language must be a string such as \"auto\" or \"en\"");
    r.language = l.get<std::string>();
  }
  const auto& allowed = languages();
  if (std::find(allowed.begin(), allowed.end(), r.language) == allowed.end())
    throw Error("unsupported_language",
                "language '" + r.language + "' is not available for realtime transcription; use 'auto' or 'en'",
                {{"field", "language"}});
  if (!realtime_enabled)
    throw Error("unsupported_pipeline",
                "realtime transcription is not enabled for this API key; ask the operator to grant it "
                "(scribe admin realtime grant)",
                {{"field", "realtime"}});
  if (body.is_object() && body.contains("cap_minutes") && !body.at("cap_minutes").is_null()) {
    const Json& c = body.at("cap_minutes");
    const auto refuse = [] {
      return Error("invalid_request", "cap_minutes must be an integer from 1 to 60", {{"field", "cap_minutes"}});
    };
    double v = 0;
    if (c.is_number_integer()) v = static_cast<double>(c.get<int64_t>());
    else if (c.is_number_unsigned()) v = static_cast<double>(c.get<uint64_t>());
    else if (c.is_number_float()) v = c.get<double>();
    else throw refuse();
    if (!std::isfinite(v) || v != std::floor(v) || v < kMinCapMinutes) throw refuse();
    r.cap_minutes = static_cast<int>(std::min<double>(v, kMaxCapMinutes));
  }
  return r;
}

money::Micros charge_for_minutes(int minutes) {
  if (minutes <= 0) return 0;
  return pricing::quote(minutes * 60.0, plans::Tier::Free).charge;
}

Cap effective_cap(int requested_minutes, plans::Tier tier, money::Micros available) {
  const int wanted = std::clamp(requested_minutes, kMinCapMinutes, kMaxCapMinutes);
  if (!plans::limits_of(tier).pay_as_you_go) return {wanted, 0};
  int minutes = wanted;
  while (minutes > 0 && charge_for_minutes(minutes) > available) --minutes;
  if (minutes == 0)
    throw Error("insufficient_funds",
                "the wallet cannot cover one minute of realtime transcription (" +
                    format_number(money::to_usd(charge_for_minutes(1))) + " USD); top up the wallet",
                {{"charge_usd", money::to_usd(charge_for_minutes(1))},
                 {"available_usd", money::to_usd(std::max<money::Micros>(0, available))}});
  return {minutes, charge_for_minutes(minutes)};
}

int64_t billed_seconds(int64_t samples) {
  if (samples <= 0) return 0;
  return (samples + kSampleRate - 1) / kSampleRate;
}

money::Micros charge(int64_t samples, plans::Tier tier, money::Micros held) {
  const int64_t seconds = billed_seconds(samples);
  if (seconds == 0 || !plans::limits_of(tier).pay_as_you_go) return 0;
  return std::min(pricing::quote(static_cast<double>(seconds), tier).charge, held);
}

int64_t cap_samples(int cap_minutes) { return int64_t{cap_minutes} * 60 * kSampleRate; }

int close_code_of(TicketRefusal r) {
  switch (r) {
    case TicketRefusal::Invalid:
    case TicketRefusal::Expired:
      return close_code::kInvalidTicket;
    case TicketRefusal::Used:
      return close_code::kTicketUsed;
    case TicketRefusal::Ended:
      return close_code::kSessionEnded;
  }
  return close_code::kInvalidTicket;
}

std::string error_code_of(TicketRefusal r) {
  switch (r) {
    case TicketRefusal::Invalid:
      return "invalid_ticket";
    case TicketRefusal::Expired:
      return "ticket_expired";
    case TicketRefusal::Used:
      return "ticket_used";
    case TicketRefusal::Ended:
      return "session_ended";
  }
  return "invalid_ticket";
}

int ticket_ttl_seconds(std::optional<int> setting) {
  // A setting may only shorten the spec's 60 s (tests of expiry).
  if (!setting || *setting <= 0) return kTicketTtlSeconds;
  return std::min(*setting, kTicketTtlSeconds);
}

bool is_stale(TimePoint last_seen, TimePoint at, int stale_seconds) {
  return at - last_seen >= std::chrono::seconds(stale_seconds);
}

void apply(Access& a, const std::string& type, const Json& d) {
  if (type == events::kRealtimeSessionStarted) {
    Session s;
    s.exists = true;
    s.id = d.at("session_id").get<std::string>();
    s.account_id = d.at("account_id").get<int64_t>();
    s.key_id = optional_key(d);
    s.transcription_id = d.at("transcription_id").get<int64_t>();
    s.language = d.value("language", "auto");
    s.cap_minutes = d.at("cap_minutes").get<int>();
    if (d.contains("hold_id") && d.at("hold_id").is_string()) s.hold = d.at("hold_id").get<std::string>();
    s.held = d.value("held_micros", int64_t{0});
    s.tier = plans::parse(d.value("plan", "free")).value_or(plans::Tier::Free);
    s.status = kLive;
    a.sessions[s.id] = s;
  } else if (type == events::kRealtimeSessionEndRequested) {
    auto it = a.sessions.find(d.at("session_id").get<std::string>());
    if (it != a.sessions.end() && it->second.status == kLive) {
      it->second.status = kEnding;
      it->second.end_reason = d.value("reason", kReasonDeleted);
    }
  } else if (type == events::kRealtimeSessionEnded) {
    auto it = a.sessions.find(d.at("session_id").get<std::string>());
    if (it != a.sessions.end()) {
      it->second.status = kEnded;
      it->second.end_reason = d.value("reason", kReasonDeleted);
      it->second.audio_samples = d.value("audio_samples", int64_t{0});
      it->second.charge = d.value("charge_micros", int64_t{0});
    }
  } else if (type == events::kApiKeyRealtimeGranted) {
    a.keys.insert(d.at("key_id").get<int64_t>());
  } else if (type == events::kApiKeyRealtimeRevoked || type == events::kApiKeyRevoked) {
    a.keys.erase(d.at("key_id").get<int64_t>());
  } else if (type == events::kAccountRealtimeGranted) {
    a.account_enabled = true;
  } else if (type == events::kAccountRealtimeRevoked) {
    a.account_enabled = false;
  }
}

Access fold(const std::vector<eventstore::RecordedEvent>& events) { return eventstore::fold<Access>(events, apply); }

int open_sessions(const Access& a) {
  int n = 0;
  for (const auto& [id, s] : a.sessions)
    if (s.status != kEnded) ++n;
  return n;
}

eventstore::NewEvent started(const Session& s, TimePoint at) {
  return {events::kRealtimeSessionStarted,
          {{"account_id", s.account_id},
           {"session_id", s.id},
           {"key_id", s.key_id ? Json(*s.key_id) : Json(nullptr)},
           {"transcription_id", s.transcription_id},
           {"language", s.language},
           {"cap_minutes", s.cap_minutes},
           {"plan", plans::name(s.tier)},
           {"hold_id", s.hold ? Json(*s.hold) : Json(nullptr)},
           {"held_micros", s.held},
           {"started_at", to_iso8601(at)}}};
}

std::optional<eventstore::NewEvent> end_requested(const Session& s, const std::string& reason) {
  if (!s.exists || s.status != kLive) return std::nullopt;
  return eventstore::NewEvent{events::kRealtimeSessionEndRequested,
                              {{"account_id", s.account_id}, {"session_id", s.id}, {"reason", reason}}};
}

std::optional<eventstore::NewEvent> ended(const Session& s, const std::string& reason, int64_t samples,
                                          money::Micros charge, TimePoint at) {
  if (!s.exists || s.status == kEnded) return std::nullopt;
  // An end requested earlier (DELETE, Terminate) keeps its reason.
  const std::string why = s.status == kEnding && s.end_reason ? *s.end_reason : reason;
  return eventstore::NewEvent{events::kRealtimeSessionEnded,
                              {{"account_id", s.account_id},
                               {"session_id", s.id},
                               {"transcription_id", s.transcription_id},
                               {"reason", why},
                               {"audio_samples", samples},
                               {"billed_seconds", billed_seconds(samples)},
                               {"charge_micros", charge},
                               {"ended_at", to_iso8601(at)}}};
}

std::vector<eventstore::NewEvent> set_access(const Access& a, int64_t account_id, std::optional<int64_t> key_id,
                                             bool enabled) {
  if (key_id) {
    if (a.keys.count(*key_id) == (enabled ? 1u : 0u)) return {};
    return {{enabled ? events::kApiKeyRealtimeGranted : events::kApiKeyRealtimeRevoked,
             {{"account_id", account_id}, {"key_id", *key_id}}}};
  }
  if (a.account_enabled == enabled) return {};
  return {{enabled ? events::kAccountRealtimeGranted : events::kAccountRealtimeRevoked, {{"account_id", account_id}}}};
}

std::string wav_header(int64_t samples) {
  const uint32_t data = static_cast<uint32_t>(samples * kBytesPerSample);
  std::string h;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](uint16_t v) {
    for (int i = 0; i < 2; ++i) h.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  h += "RIFF";
  u32(36 + data);
  h += "WAVEfmt ";
  u32(16);
  u16(1);  // PCM
  u16(1);  // mono
  u32(kSampleRate);
  u32(kSampleRate * kBytesPerSample);
  u16(kBytesPerSample);
  u16(16);
  h += "data";
  u32(data);
  return h;
}

}  // namespace scribe::realtime
