#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "commands/account_commands.h"

// Commands on the Webhook aggregate (one stream per API key): register
// (replacing the key's webhook), revoke, and request a test delivery.
namespace scribe::commands {

struct RegisteredWebhook {
  int64_t webhook_id = 0;
  std::string signing_secret;  // shown once, never stored (derived, see below)
};
RegisteredWebhook register_webhook(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                                   int64_t key_id, const std::string& url, const std::vector<std::string>& events,
                                   const Meta& meta);
// True when a webhook was active and is now revoked.
bool revoke_webhook(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id, int64_t key_id,
                    const Meta& meta);
// Appends WebhookTestRequested; returns the delivery id the outbox will give
// it. Throws Error::not_found when the key has no webhook.
int64_t request_webhook_test(const eventstore::EventStore& store, pqxx::connection& conn, int64_t account_id,
                             int64_t key_id, const Meta& meta);

// A webhook's signing secret: derived from a server secret and the webhook id,
// like the per-request callback secret, so no secret sits in the event log and
// every process signs with the same value.
std::string webhook_signing_secret(pqxx::connection& conn, int64_t webhook_id);

}  // namespace scribe::commands
