#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>

// The media_renditions table (migrations/063_media_renditions.sql): per
// stored source of a transcription, whether the player gets it as it is or a
// rendition, and the queue of renditions to make. Written by GET .../media
// (the decision, from a probe) and by the rendition worker (the outcome);
// claimed like clips (FOR UPDATE SKIP LOCKED and a lease kept by heartbeats).
namespace scribe::workers::renditions {

inline constexpr const char* kOriginal = "original";
inline constexpr const char* kQueued = "queued";
inline constexpr const char* kReady = "ready";
inline constexpr const char* kFailed = "failed";

struct Row {
  int64_t transcription_id = 0;
  std::string source;  // upload | video | audio
  std::string state;
  std::string kind;          // audio | video
  std::string content_type;  // of what is served
  std::optional<double> duration_seconds;
  std::optional<std::string> error;
  int claims = 0;
};

std::optional<Row> load(pqxx::connection& conn, int64_t transcription_id, const std::string& source);
// Records the decision for a source that has none (a concurrent decision
// wins; it is the same one). A `queued` one wakes the rendition workers.
void decide(pqxx::connection& conn, const Row& row);
// Forgets the decision (the source was replaced: another video added).
void forget(pqxx::connection& conn, int64_t transcription_id, const std::string& source);

// The worker's side.
std::optional<Row> claim(pqxx::connection& conn, const std::string& owner, std::chrono::seconds lease);
bool renew(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner,
           std::chrono::seconds lease);
// Hands the rendition back (graceful shutdown): the claim is not counted.
void release(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner);
// The outcome, recorded only while `owner` holds the lease; false otherwise.
bool finish(pqxx::connection& conn, int64_t transcription_id, const std::string& source, const std::string& owner,
            const std::string& state, const std::string& content_type, const std::optional<std::string>& error);
// Deletes rows whose transcription is gone; returns how many.
int sweep_deleted(pqxx::connection& conn);

}  // namespace scribe::workers::renditions
