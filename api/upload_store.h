#pragma once
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

// The uploads table (migrations/009_uploads.sql) and the staging files behind
// it: the state shared by the presigned and the tus handlers and read by
// POST /transcriptions and /quotes.
namespace scribe::api::uploads {

struct Row {
  std::string id;  // normalized: upl_<id> or tus/<id>
  int64_t account_id = 0;
  std::string kind;  // presigned | tus
  std::optional<std::string> filename;
  std::optional<std::string> content_type;
  int64_t declared_size = 0;
  int64_t received_bytes = 0;
  std::optional<std::string> resume_token_hash;
  int64_t expires_unix = 0;
  bool completed = false;
};

std::optional<Row> load(pqxx::connection& conn, const std::string& id);
void insert(pqxx::connection& conn, const Row& row);
void set_received(pqxx::connection& conn, const std::string& id, int64_t received_bytes);
// Marks the upload complete; false when it already was (single use).
bool mark_completed(pqxx::connection& conn, const std::string& id, int64_t received_bytes);
void mark_incomplete(pqxx::connection& conn, const std::string& id);
void remove(pqxx::connection& conn, const std::string& id);

// Where bodies are written while they arrive: <work_dir>/staging
// (SCRIBE_WORK_DIR, by default beside the objects, so completing an upload is
// a rename). configure_staging creates it once at start-up; staging_dir()
// throws std::logic_error before that.
void configure_staging(const std::string& work_dir);
std::string staging_dir();
// Where the bytes of the resumable upload tus/<short_id> accumulate.
inline std::string tus_staging_file(const std::string& short_id) { return staging_dir() + "/tus/" + short_id; }
// The object store key of a completed upload.
inline std::string object_key(const std::string& id) { return "uploads/" + id; }

// For source `upload` on POST /transcriptions and /quotes: the upload must
// exist, be complete and belong to `account_id`; else 400 invalid_request
// naming upload_id (uploads of other accounts are reported like unknown ones).
void require_completed(pqxx::connection& conn, int64_t account_id, const std::string& id);

int64_t unix_now();

// Deletes unfinished uploads whose expiry passed more than `grace_seconds`
// ago, together with their staging files, at most `batch` per call; returns
// how many it deleted. The files go first and the rows after, so a process
// killed in between leaves rows that the next sweep finishes, never files that
// nothing points to. `scribe serve` calls it every SCRIBE_HOUSEKEEPING_SECONDS.
int sweep_expired(pqxx::connection& conn, int64_t grace_seconds, int batch = 500);

}  // namespace scribe::api::uploads
