#pragma once

// Event type names: facts in the past tense. Payloads are JSON objects whose
// fields are documented where each event is decided.
namespace scribe::events {

inline constexpr const char* kAccountOpened = "AccountOpened";    // {account_id, email, plan}
inline constexpr const char* kPlanChanged = "PlanChanged";        // {account_id, from, to}
inline constexpr const char* kWalletDeposited = "WalletDeposited";  // {account_id, amount_micros, reference}
inline constexpr const char* kApiKeyCreated = "ApiKeyCreated";
// {account_id, key_id, name, key_hash, key_prefix, permission, monthly_cap_micros|null, expires_at|null}
inline constexpr const char* kApiKeyRevoked = "ApiKeyRevoked";  // {account_id, key_id}

}  // namespace scribe::events
