#pragma once
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "commands/transcription_commands.h"
#include "domain/clip.h"

// Commands on clips (domain/clip.h). Creation takes the account's lock and
// then the transcription's (deletion takes them in the same order, so the two
// cannot deadlock and a clip is either refused or seen by the deletion),
// decides on the account stream and appends the hold, ClipAccepted and the
// clip's ClipRequested in one transaction: a clip never exists without its
// hold nor a hold without its clip. The worker's outcome settles or releases
// that hold in the transaction that records it, only while the clip is still
// queued, so a hold is closed exactly once whichever worker finishes first.
namespace scribe::commands {

// What the transcription offers a clip, read by the handler before it calls
// create_clip (and checked again under the lock there).
struct ClipSubject {
  double duration_seconds = 0;
  std::string source;  // "upload", "external_url", "video_site", "platform_url"
  std::optional<std::string> upload_id;
  std::optional<std::string> url;
};
// 404 when the transcription is not the caller's; 409 not_ready unless it is
// completed.
ClipSubject clip_subject(pqxx::transaction_base& txn, int64_t account_id, int64_t transcription_id);

struct ClipCreated {
  int64_t clip_id = 0;
  money::Micros charge = 0;
  bool repeated = false;  // an earlier clip with the same client_nonce
};
// Every check of POST .../clips that needs the database, in the spec's
// order: the transcription (404, 409), the range and its words (400), the
// ceiling (402 max_charge_exceeded), the limits (429), the wallet and the
// key's cap (402). `link_video`: the render needs a link's source video;
// whether that starts a new download (counted against the daily cap: no
// earlier clip of the transcription started one and none is kept) is decided
// under the account's lock.
ClipCreated create_clip(const eventstore::EventStore& store, pqxx::connection& conn, const Caller& caller,
                        const clip::Request& req, bool link_video);
// The same checks, nothing appended (GET .../clips/quote).
money::Micros quote_clip(pqxx::connection& conn, const Caller& caller, const clip::Request& req, bool link_video);

// Worker side. False (nothing appended) when the clip is not queued any more.
bool complete_clip(const eventstore::EventStore& store, pqxx::connection& conn, int64_t clip_id,
                   const clip::Rendered& rendered, const Meta& meta);
bool fail_clip(const eventstore::EventStore& store, pqxx::connection& conn, int64_t clip_id, const std::string& code,
               const std::string& message, const Meta& meta);

// The per-clip callback secret: deterministic per clip, never stored.
std::string clip_callback_secret(pqxx::connection& conn, int64_t clip_id);

// Transcription deletion: its clips still queued fail (error
// transcription_deleted) and their holds are released; the events go into
// `clip_appends` and `account_events` (appended by the caller at the account
// version it read). Returns the clip streams to redact after the append.
std::vector<std::string> abandon_clips(pqxx::work& txn, const account::State& acc, int64_t transcription_id,
                                       std::vector<eventstore::StreamAppend>& clip_appends,
                                       std::vector<eventstore::NewEvent>& account_events, const Meta& meta);

}  // namespace scribe::commands
