#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <variant>

#include "api/http.h"
#include "common/error.h"

namespace scribe::api {

// The spec's idempotency rules for POST endpoints, as one layer:
//  1. identity (principal, key), entries valid 24 h;
//  2. the same identity replays the stored response unchanged;
//  3. a different body (compared as body_fingerprint() says), method or path
//     under the same key is 400;
//  4. 2xx and 4xx responses are stored, 5xx are not (the key is released);
//  5. a request while the first is still running is 409 not_ready with
//     in_flight_seconds, and stale: true from 120 s.
// Claiming a key is one INSERT ... ON CONFLICT DO NOTHING, so of two racing
// identical requests exactly one executes.
class Idempotency {
 public:
  struct Proceed {};
  using Outcome = std::variant<Proceed, Response>;

  // Validates the key and either claims it (Proceed) or answers from the cache.
  // Throws Error for rule 3 and rule 5.
  static Outcome begin(pqxx::connection& conn, const std::string& principal, const std::string& key,
                       const Request& req);
  // begin() for a request whose body is not in Request::body (a multipart
  // upload streamed to disk): rule 3 compares `fingerprint`, which the caller
  // made of what it parsed (api/openai/transcription_form.h).
  static Outcome begin_fingerprinted(pqxx::connection& conn, const std::string& principal, const std::string& key,
                                     const std::string& method, const std::string& path,
                                     const std::string& fingerprint);
  // Releases a claimed key whose request stored nothing (as a 5xx does).
  static void release(pqxx::connection& conn, const std::string& principal, const std::string& key);
  // Deletes a completed entry, but only while it still holds `stored_body`
  // (so of two callers forgetting the same entry, the second cannot delete
  // the claim the first made since); true when it did.
  static bool forget(pqxx::connection& conn, const std::string& principal, const std::string& key,
                     const std::string& stored_body);
  // Stores the response of a claimed key (2xx/4xx) or releases it (5xx).
  // Leaves a response stored already (by the overload below) as it is.
  static void finish(pqxx::connection& conn, const std::string& principal, const std::string& key, const Response& res);
  // Stores the 2xx/4xx response of a claimed key inside the caller's
  // transaction, naming `reveals`: the event stream whose text the body
  // quotes. For a response that must be kept exactly as long as that text
  // is: the stream and the copy commit together, and whatever redacts the
  // stream finds the copy by its name and redacts it too (a saved ask's
  // answer: migrations/059_idempotent_reveals.sql, commands/ask_commands.cpp).
  static void finish(pqxx::transaction_base& txn, const std::string& principal, const std::string& key,
                     const Response& res, const std::string& reveals);
  // What rule 3 compares. A body the JSON parser accepts is compared by
  // meaning: "json1:" and the SHA-256 of the parsed value dumped with sorted
  // keys and no whitespace, so reformatting or reordering keys still replays.
  // Any other body (empty, not JSON, repeated keys) is compared by its bytes:
  // the bare SHA-256 hex, the form every entry had before.
  static std::string body_fingerprint(const std::string& body);
  // Throws 400 when the key is empty, too long or has control characters.
  static void validate_key(const std::string& key);
  // Deletes up to `batch` entries older than the 24 h they are valid for
  // (begin() also drops an expired entry when its key comes back); returns
  // how many. `scribe serve` calls it now and then, so keys that never come
  // back do not pile up.
  static int purge_expired(pqxx::connection& conn, int batch = 1000);

 private:
  static Outcome claim(pqxx::connection& conn, const std::string& principal, const std::string& key,
                       const std::string& method, const std::string& path, const std::string& body_hash,
                       const std::string& also_accepted);
};

}  // namespace scribe::api
