#include "domain/webhook.h"

#include <algorithm>
#include <cmath>

#include "common/crypto.h"
#include "common/error.h"
#include "common/text.h"
#include "common/time.h"
#include "domain/events.h"
#include "domain/limits.h"
#include "domain/money.h"

namespace scribe::webhook {
namespace {

bool has(const Json& d, const char* k) { return d.is_object() && d.contains(k) && !d.at(k).is_null(); }

// PostgreSQL renders recorded_at with microseconds; the API shows milliseconds.
std::string api_time(const std::string& recorded_at) {
  auto t = parse_iso8601(recorded_at);
  return t ? to_iso8601(*t) : recorded_at;
}

}  // namespace

const std::vector<std::string>& subscribable_kinds() {
  static const std::vector<std::string> kinds = {kTranscriptionCompleted, kTranscriptionFailed, kClipCompleted,
                                                 kClipFailed};
  return kinds;
}

std::vector<std::string> normalize_events(const std::optional<std::vector<std::string>>& requested) {
  if (!requested) return subscribable_kinds();
  std::vector<std::string> out;
  for (const auto& kind : subscribable_kinds())
    if (std::find(requested->begin(), requested->end(), kind) != requested->end()) out.push_back(kind);
  if (out.empty())
    throw Error::invalid("events",
                         "events has no known event kind; use transcription.completed, transcription.failed, "
                         "clip.completed or clip.failed, or omit events for all four");
  return out;
}

bool subscribes(const Json& events, const std::string& kind) {
  if (kind == kTest) return true;
  if (!events.is_array()) return false;
  return std::any_of(events.begin(), events.end(), [&](const Json& e) { return e.is_string() && e == kind; });
}

std::string stream_id(int64_t key_id) { return "webhook-key-" + std::to_string(key_id); }

void apply(State& s, const std::string& type, const Json& d) {
  if (type == events::kWebhookRegistered) {
    s.active_webhook_id = d.at("webhook_id").get<int64_t>();
  } else if (type == events::kWebhookRevoked) {
    s.active_webhook_id.reset();
  }
}

State fold(const std::vector<eventstore::RecordedEvent>& events) { return eventstore::fold<State>(events, apply); }

eventstore::NewEvent registered(const State& s, int64_t account_id, int64_t key_id, int64_t webhook_id,
                                const std::string& url, const std::vector<std::string>& kinds) {
  return {events::kWebhookRegistered,
          {{"account_id", account_id},
           {"key_id", key_id},
           {"webhook_id", webhook_id},
           {"url", url},
           {"events", kinds},
           {"replaced_webhook_id", s.active_webhook_id ? Json(*s.active_webhook_id) : Json(nullptr)}}};
}

std::optional<eventstore::NewEvent> revoked(const State& s, int64_t account_id, int64_t key_id) {
  if (!s.active_webhook_id) return std::nullopt;
  return eventstore::NewEvent{events::kWebhookRevoked,
                              {{"account_id", account_id}, {"key_id", key_id}, {"webhook_id", *s.active_webhook_id}}};
}

eventstore::NewEvent test_requested(const State& s, int64_t account_id, int64_t key_id) {
  if (!s.active_webhook_id) throw Error::not_found("webhook");
  return {events::kWebhookTestRequested,
          {{"account_id", account_id},
           {"key_id", key_id},
           {"webhook_id", *s.active_webhook_id},
           {"message", "This is a test delivery from scribe."}}};
}

int64_t delivery_id(int64_t event_position, bool callback) { return event_position * 2 + (callback ? 1 : 0); }

std::string event_id(int64_t event_position) { return "evt_" + std::to_string(event_position); }

std::string delivery_body(const std::string& id, const std::string& kind, int64_t created_unix, const Json& data) {
  // Key order as in the spec's table; nlohmann's ordered_json would reorder
  // nothing either way, but a fixed dump keeps the bytes stable across versions.
  Json body = {{"id", id}, {"event", kind}, {"created", created_unix}, {"data", data}};
  return body.dump();
}

std::string signature_header(const std::string& secret, int64_t unix_seconds, const std::string& body) {
  const std::string t = std::to_string(unix_seconds);
  return "t=" + t + ",v1=" + crypto::hmac_sha256_hex(secret, t + "." + body);
}

RetryPolicy RetryPolicy::spec() {
  RetryPolicy p;
  for (int s : limits::kWebhookRetryDelaysSeconds) p.delays.emplace_back(s);
  p.max_attempts = limits::kWebhookMaxAttempts;
  return p;
}

std::optional<RetryPolicy> RetryPolicy::parse(const std::string& csv, int max_attempts) {
  RetryPolicy p;
  p.max_attempts = max_attempts;
  for (const std::string& item : split_list(csv, EmptyItems::kKeep)) {
    if (item.empty() || item.size() > 9 || !std::all_of(item.begin(), item.end(), ::isdigit)) return std::nullopt;
    p.delays.emplace_back(std::stoll(item));
  }
  if (p.delays.empty() || max_attempts < 1) return std::nullopt;
  return p;
}

std::optional<std::chrono::seconds> next_delay(const RetryPolicy& p, int attempts) {
  if (attempts >= p.max_attempts || attempts < 1) return std::nullopt;
  // The n-th failure waits the n-th delay; a policy with fewer delays than
  // attempts repeats its last one.
  std::size_t i = std::min(static_cast<std::size_t>(attempts - 1), p.delays.size() - 1);
  return p.delays[i];
}

bool is_success(long http_status) { return http_status >= 200 && http_status < 300; }

std::optional<std::string> delivery_kind(const std::string& type) {
  if (type == events::kTranscriptionCompleted) return std::string(kTranscriptionCompleted);
  if (type == events::kTranscriptionFailed) return std::string(kTranscriptionFailed);
  return std::nullopt;
}

void evolve_snapshot(Json& s, const std::string& type, const Json& d, const std::string& recorded_at) {
  const std::string at = api_time(recorded_at);
  auto set_if = [&](const char* to, const char* from) {
    if (has(d, from)) s[to] = d.at(from);
  };
  if (type == events::kTranscriptionCreated) {
    s = Json{{"id", d.at("transcription_id")},
             {"status", "processing"},
             {"stage", "queued"},
             {"pipeline_code", has(d, "pipeline_code") ? d.at("pipeline_code") : Json("standard")},
             {"language", has(d, "language") ? d.at("language") : Json("auto")},
             {"detected_language", nullptr},
             {"source", has(d, "source") ? d.at("source") : Json(nullptr)},
             {"title", has(d, "title") ? d.at("title") : Json(nullptr)},
             {"duration_seconds", has(d, "duration_seconds") ? d.at("duration_seconds") : Json(nullptr)},
             {"charge_usd", money::to_usd(has(d, "charge_micros") ? d.at("charge_micros").get<int64_t>() : 0)},
             {"error", nullptr},
             {"created_at", at},
             {"processing_started_at", nullptr},
             {"completed_at", nullptr}};
  } else if (s.is_null()) {
    return;  // events of a transcription created before this snapshot existed
  } else if (type == events::kTranscriptionRetried) {
    s["status"] = "processing";
    s["stage"] = "queued";
    s["error"] = nullptr;
    s["completed_at"] = nullptr;
    if (has(d, "charge_micros")) s["charge_usd"] = money::to_usd(d.at("charge_micros").get<int64_t>());
  } else if (type == events::kTranscriptionStageChanged) {
    if (has(d, "stage")) s["stage"] = d.at("stage");
    if (s["processing_started_at"].is_null() && s["stage"] != "queued") s["processing_started_at"] = at;
  } else if (type == events::kTranscriptionCompleted || type == events::kTranscriptionFailed) {
    const bool ok = type == events::kTranscriptionCompleted;
    s["status"] = ok ? "completed" : "failed";
    s["stage"] = ok ? "completed" : "failed";
    s["completed_at"] = at;
    if (has(d, "charge_micros")) s["charge_usd"] = money::to_usd(d.at("charge_micros").get<int64_t>());
    if (ok) {
      set_if("duration_seconds", "duration_seconds");
      set_if("detected_language", "detected_language");
      set_if("title", "title");
      if (s["processing_started_at"].is_null()) s["processing_started_at"] = at;
    } else {
      s["error"] = has(d, "error") ? d.at("error") : Json{{"code", "internal_error"}, {"message", "failed"}};
    }
  }
}

}  // namespace scribe::webhook
