#pragma once
#include <optional>
#include <pqxx/pqxx>

#include "common/json.h"

namespace scribe::api {

// The Transcription object as GET, list, wait and webhooks render it, read
// from the `transcriptions` projection. Never includes the callback secret.
std::optional<Json> load_transcription(pqxx::transaction_base& txn, int64_t account_id, int64_t id);
// A page of the account's transcriptions, newest first, ids below `before`.
std::vector<Json> list_transcriptions(pqxx::transaction_base& txn, int64_t account_id, std::optional<int64_t> before,
                                      const std::optional<std::string>& client_reference, bool api_only, int limit);

}  // namespace scribe::api
