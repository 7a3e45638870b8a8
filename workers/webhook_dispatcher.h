#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "common/http_client.h"
#include "domain/limits.h"
#include "domain/webhook.h"

// Sends the webhook outbox (projections/webhook_outbox_projection.cpp). Sender
// threads claim due deliveries under a lease (FOR UPDATE SKIP LOCKED, so any
// number of processes can send from one database), POST them signed, and
// record the outcome only if the lease is still theirs. A process killed
// mid-POST leaves the lease to expire and the delivery is sent again: at
// least once, and never again once its 2xx is recorded.
namespace scribe::workers {

struct DispatcherOptions {
  int senders = 4;  // SCRIBE_WEBHOOK_SENDERS: deliveries in flight per process (0: off)
  webhook::RetryPolicy retry = webhook::RetryPolicy::spec();  // SCRIBE_WEBHOOK_RETRY_DELAYS (seconds, comma separated)
  std::chrono::milliseconds timeout{std::chrono::seconds(limits::kWebhookTimeoutSeconds)};  // the spec's, per attempt
  // SCRIBE_WEBHOOK_LEASE_SECONDS: longer than an attempt (kWebhookTimeoutSeconds + 1 at least), so a
  // delivery still being sent is not handed to a second sender.
  std::chrono::seconds lease{30};
  std::chrono::milliseconds poll{500};  // SCRIBE_WEBHOOK_POLL_MS: idle wait when no NOTIFY arrives
  // The service's public base URL (SCRIBE_PUBLIC_URL): clip deliveries carry
  // links to the clip's files under it.
  std::string public_url;
};

class WebhookDispatcher {
 public:
  // `outbound` is the policy for receivers' URLs (SCRIBE_ALLOW_PRIVATE_URLS, ...).
  WebhookDispatcher(std::string database_url, DispatcherOptions options, UrlPolicy outbound);
  ~WebhookDispatcher();
  void start();
  void stop();

  // Claims at most `max` due deliveries and sends them one after another;
  // returns how many were claimed. The sender threads loop over this.
  static int deliver_due(pqxx::connection& conn, const HttpClient& client, const DispatcherOptions& options, int max);

 private:
  void listen();
  void send_loop();

  std::string url_;
  DispatcherOptions options_;
  HttpClient client_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wakeups_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace scribe::workers
