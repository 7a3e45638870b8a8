#include "workers/webhook_dispatcher.h"

#include <cstdlib>

#include "commands/clip_commands.h"
#include "commands/transcription_commands.h"
#include "commands/webhook_commands.h"
#include "common/config.h"
#include "common/db.h"
#include "common/log.h"
#include "common/secrets.h"
#include "domain/clip.h"
#include "domain/limits.h"

namespace scribe::workers {
namespace {

// Due deliveries, oldest due first. A claim counts as an attempt: a process
// that dies mid-POST has used one of the delivery's five.
const db::Statement kClaim{
    "webhooks.claim",
    "with due as (select delivery_id from webhook_deliveries where status = 'pending' and next_attempt_at <= now() "
    "and (lease_until is null or lease_until < now()) order by next_attempt_at, delivery_id limit $1 "
    "for update skip locked) "
    "update webhook_deliveries w set attempts = w.attempts + 1, lease_until = now() + make_interval(secs => $2), "
    "updated_at = now() from due where w.delivery_id = due.delivery_id returning w.delivery_id, w.attempts"};
const db::Statement kLoad{
    "webhooks.load_delivery",
    "select o.event_id, o.event, o.url, o.body, o.webhook_id, o.transcription_id, "
    "(o.webhook_id is not null and (wh.id is null or wh.revoked_at is not null)) as revoked, "
    "(h.disabled_at is not null) as disabled, o.clip_id from webhook_outbox o "
    "left join webhooks wh on wh.id = o.webhook_id left join webhook_health h on h.webhook_id = o.webhook_id "
    "where o.id = $1"};
// Each outcome is recorded only while the claim is still ours (same attempt
// number), so a slow sender whose lease expired cannot overwrite a later one.
const db::Statement kDelivered{"webhooks.delivered",
                               "update webhook_deliveries set status = 'delivered', delivered_at = now(), "
                               "lease_until = null, last_status = $3, last_error = null, updated_at = now() "
                               "where delivery_id = $1 and attempts = $2 and status = 'pending'"};
const db::Statement kRetryLater{"webhooks.retry_later",
                                "update webhook_deliveries set next_attempt_at = now() + make_interval(secs => $3), "
                                "lease_until = null, last_status = $4, last_error = $5, updated_at = now() "
                                "where delivery_id = $1 and attempts = $2 and status = 'pending'"};
const db::Statement kFinish{"webhooks.finish",
                            "update webhook_deliveries set status = $3, lease_until = null, last_status = $4, "
                            "last_error = $5, updated_at = now() "
                            "where delivery_id = $1 and attempts = $2 and status = 'pending'"};
const db::Statement kHealthSuccess{"webhooks.health_success",
                                   "insert into webhook_health(webhook_id, consecutive_failures, last_delivery_at, "
                                   "last_success_at) values ($1, 0, now(), now()) on conflict (webhook_id) do update "
                                   "set consecutive_failures = 0, last_delivery_at = now(), last_success_at = now()"};
const db::Statement kHealthFailure{
    "webhooks.health_failure",
    "insert into webhook_health(webhook_id, consecutive_failures, last_delivery_at, disabled_at) "
    "values ($1, 1, now(), case when 1 >= $2 then now() end) on conflict (webhook_id) do update "
    "set consecutive_failures = webhook_health.consecutive_failures + 1, last_delivery_at = now(), "
    "disabled_at = coalesce(webhook_health.disabled_at, case when webhook_health.consecutive_failures + 1 >= $2 "
    "then now() end) returning disabled_at is not null"};

struct Attempt {
  long status = 0;    // 0: no HTTP response
  std::string error;  // empty on success
};

Attempt post(const HttpClient& client, const DispatcherOptions& options, const std::string& url,
             const std::string& kind, const std::string& body, const std::string& secret) {
  const auto unix_now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "application/json"},
      {"X-Service-Signature", webhook::signature_header(secret, unix_now, body)},
      {"X-Service-Event", kind}};
  try {
    auto res = client.post(url, headers, body, options.timeout);
    Attempt a{res.status, {}};
    if (!webhook::is_success(res.status)) a.error = "HTTP " + std::to_string(res.status);
    return a;
  } catch (const HttpError& err) {
    return {0, err.what()};
  }
}

// Sends one claimed delivery and records what happened.
void deliver(pqxx::connection& conn, const HttpClient& client, const DispatcherOptions& options, int64_t id,
             int attempts) {
  std::optional<pqxx::row> row;
  {
    pqxx::nontransaction txn(conn);
    auto res = txn.exec_prepared(kLoad.name, id);
    if (!res.empty()) row = res[0];
  }
  auto finish = [&](const char* status, long http, const std::string& error) {
    pqxx::work txn(conn);
    txn.exec_prepared(kFinish.name, id, attempts, status, http ? std::optional<long>(http) : std::nullopt, error);
    txn.commit();
  };
  if (!row) return finish("dropped", 0, "the transcription was deleted");
  const auto& r = *row;
  const std::optional<int64_t> webhook_id = r[4].is_null() ? std::nullopt : std::optional<int64_t>(r[4].as<int64_t>());
  if (r[6].as<bool>()) return finish("dropped", 0, "the webhook was revoked or replaced");
  if (r[7].as<bool>()) return finish("dropped", 0, "the webhook is disabled");
  if (attempts > options.retry.max_attempts) return finish("failed", 0, "the last attempt was interrupted");

  const int64_t clip_id = r[8].is_null() ? 0 : r[8].as<int64_t>();  // 0: not a clip event
  const std::string secret = webhook_id ? commands::webhook_signing_secret(conn, *webhook_id)
                             : clip_id  ? commands::clip_callback_secret(conn, clip_id)
                                        : commands::callback_secret(conn, r[5].as<int64_t>());
  const std::string kind = r[1].c_str();
  std::string body = r[3].c_str();
  if (clip_id > 0) {
    // The clip's links are signed now, so each attempt carries an hour of
    // validity (the spec: clip.completed carries a fresh mp4_url).
    Json j = Json::parse(body);
    j["data"]["clip"] =
        clip::to_json(j["data"]["clip"], clip_id, options.public_url, secrets::get(conn, clip::kLinkSecretName), now());
    body = j.dump();
  }
  const auto started = std::chrono::steady_clock::now();
  Attempt a = post(client, options, r[2].c_str(), kind, body, secret);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  const bool ok = a.error.empty();
  const std::optional<long> http = a.status ? std::optional<long>(a.status) : std::nullopt;
  pqxx::work txn(conn);
  bool disabled = false;
  if (ok) {
    txn.exec_prepared(kDelivered.name, id, attempts, http);
    if (webhook_id) txn.exec_prepared(kHealthSuccess.name, *webhook_id);
  } else {
    auto delay = webhook::next_delay(options.retry, attempts);
    if (delay) txn.exec_prepared(kRetryLater.name, id, attempts, static_cast<double>(delay->count()), http, a.error);
    else txn.exec_prepared(kFinish.name, id, attempts, "failed", http, a.error);
    if (webhook_id)
      disabled =
          txn.exec_prepared1(kHealthFailure.name, *webhook_id, limits::kWebhookDisableAfterFailures)[0].as<bool>();
  }
  txn.commit();
  Json fields = {{"delivery_id", id}, {"event_id", r[0].c_str()}, {"event", kind}, {"attempt", attempts}, {"ms", ms}};
  if (http) fields["status"] = *http;
  if (ok) {
    log::debug("webhook delivered", fields);
  } else {
    fields["error"] = a.error;
    log::warn("webhook delivery failed", fields);
    if (disabled) log::warn("webhook disabled after consecutive failures", {{"webhook_id", *webhook_id}});
  }
}

}  // namespace

WebhookDispatcher::WebhookDispatcher(std::string database_url, DispatcherOptions options, UrlPolicy outbound)
    : url_(std::move(database_url)), options_(std::move(options)), client_(std::move(outbound), "service-webhook/1") {}

WebhookDispatcher::~WebhookDispatcher() { stop(); }

void WebhookDispatcher::start() {
  if (options_.senders == 0) return;
  threads_.emplace_back([this] { listen(); });
  for (int i = 0; i < options_.senders; ++i) threads_.emplace_back([this] { send_loop(); });
}

void WebhookDispatcher::stop() {
  stopping_ = true;
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

int WebhookDispatcher::deliver_due(pqxx::connection& conn, const HttpClient& client, const DispatcherOptions& options,
                                   int max) {
  std::vector<std::pair<int64_t, int>> claimed;
  {
    pqxx::work txn(conn);
    for (const auto& r : txn.exec_prepared(kClaim.name, max, static_cast<double>(options.lease.count())))
      claimed.emplace_back(r[0].as<int64_t>(), r[1].as<int>());
    txn.commit();
  }
  for (const auto& [id, attempts] : claimed) deliver(conn, client, options, id, attempts);
  return static_cast<int>(claimed.size());
}

// One connection LISTENs for the outbox projection's NOTIFY and wakes the
// senders; they also look on their own every `poll`, for retries coming due.
void WebhookDispatcher::listen() {
  db::listen_until(url_, "scribe_webhooks", "webhook listener", stopping_, [this] {
    std::lock_guard lock(mu_);
    ++wakeups_;
    cv_.notify_all();
  });
}

void WebhookDispatcher::send_loop() {
  while (!stopping_) {
    try {
      auto conn = db::open_connection(url_);
      while (!stopping_) {
        uint64_t seen;
        {
          std::lock_guard lock(mu_);
          seen = wakeups_;
        }
        if (deliver_due(*conn, client_, options_, 1) > 0) continue;
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, options_.poll, [&] { return stopping_ || wakeups_ != seen; });
      }
    } catch (const std::exception& err) {
      log::error("webhook sender failed; retrying", {{"error", err.what()}});
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

}  // namespace scribe::workers
