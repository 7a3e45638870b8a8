#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/time.h"
#include "domain/account.h"
#include "domain/money.h"
#include "eventstore/event.h"

// The Clip aggregate (the spec's "Clips"): a captioned render of a moment of a
// completed transcription, paid from the wallet. Its stream `clip-<id>` holds
// ClipRequested, then ClipCompleted or ClipFailed. The money and the limits
// are decided on the account stream: a hold with purpose "clip" per clip in
// progress (so "in progress" is "its hold is open"), and ClipAccepted, which
// records whether the clip starts a new download of the source video.
// Pure: commands/clip_commands.cpp does the I/O.
namespace scribe::clip {

inline constexpr const char* kQueued = "queued";
inline constexpr const char* kCompleted = "completed";
inline constexpr const char* kFailed = "failed";

std::string stream_id(int64_t clip_id);  // "clip-<id>"
std::string hold_id(int64_t clip_id);    // "clip-<id>"

// What POST .../clips asks for, after parsing. Option strings are the spec's
// spellings; check_request() refuses any other.
struct Request {
  int64_t transcription_id = 0;
  double start_seconds = 0;
  double end_seconds = 0;
  std::string aspect = "9:16";
  std::string style = "captions";
  std::string output = "audiogram";
  std::string caption_position = "lower";
  int words_per_line = 3;
  std::string highlight_color = "#FFD400";
  std::string framing = "blur";
  bool rights_affirmed = false;
  std::optional<std::string> title;
  std::optional<std::string> client_nonce;
  std::optional<std::string> callback_url;
  std::optional<money::Micros> max_charge;

  double clip_seconds() const { return end_seconds - start_seconds; }
};

// The rules that need nothing but the request: option values, the 1-60 s
// length (61-180 s is the spec's "where enabled": 400 feature_unavailable),
// the styles the spec lists as optional (highlight, boxed, none: not
// enabled), title (at most 120 characters, no control characters) and nonce
// (a UUID) shapes. Throws the spec's 400s.
void check_request(const Request& r);
// The range lies within the recording (a 50 ms slack absorbs the rounding of
// durations); throws 400 invalid_request on end_seconds.
void check_range(const Request& r, double transcription_seconds);
// A UUID in its 8-4-4-4-12 hex form, either case.
bool is_uuid(std::string_view s);
// A UUID in its canonical form: the 8-4-4-4-12 hex form with lower-case
// digits (RFC 9562 reads UUIDs in either case and writes them in lower
// case); nullopt when `s` is not a UUID. client_nonce is compared and kept
// in this form, so a repeat in another case names the same clip.
std::optional<std::string> canonical_uuid(std::string_view s);

// 0.05 USD per started 60 s of clip, on every plan.
money::Micros charge(double clip_seconds);

// The account's side of a new clip: 429 rate_limited when kMaxInProgress
// clips of the account already hold money (reason clips_in_progress), or when
// the clip would start a source-video download beyond kMaxVideoDownloadsPerDay
// in the last 24 h (reason source_video_daily_cap, with retry_after).
void check_admission(const account::State& acc, bool starts_video_download, TimePoint at);
// Clips of the account in progress: holds with purpose "clip" still open.
int in_progress(const account::State& acc);

// ClipAccepted {account_id, clip_id, transcription_id, video_download, accepted_at}
// for the account stream (the hold's events follow it).
eventstore::NewEvent accepted(int64_t account_id, int64_t clip_id, int64_t transcription_id, bool video_download,
                              TimePoint at);
// ClipRequested {clip_id, account_id, transcription_id, key_id|null, start_seconds,
// end_seconds, aspect, style, output, caption_position, words_per_line,
// highlight_color, framing, rights_affirmed, title|null, client_nonce|null,
// callback_url|null, charge_micros, hold_id, video_download, requested_at}
eventstore::NewEvent requested(int64_t clip_id, int64_t account_id, std::optional<int64_t> key_id, const Request& r,
                               money::Micros charge, bool video_download, TimePoint at);

// A clip as its stream tells it.
struct State {
  bool exists = false;
  int64_t id = 0;
  int64_t account_id = 0;
  std::optional<int64_t> key_id;
  std::string status;
  std::string hold;
  money::Micros charge = 0;         // held while queued, charged once completed, 0 once failed
  Json requested = Json::object();  // the ClipRequested payload
  int64_t version = 0;
};
void apply(State& s, const std::string& type, const Json& data);
State fold(const std::vector<eventstore::RecordedEvent>& events);

// The files of a finished render, kept in the object store under the
// transcription's prefix (so deleting the transcription deletes them).
struct Rendered {
  double duration_seconds = 0;
  std::string file_key;
  std::string file_name;     // "clip.mp4" or "clip.m4a"
  std::string content_type;  // "video/mp4" or "audio/mp4"
  int64_t bytes = 0;
  std::string srt_key;
};
// ClipCompleted / ClipFailed carry what a webhook needs (key_id, callback_url
// and the clip's public snapshot), so the outbox needs no other read model.
// Both are nullopt when the clip is not queued any more (finished elsewhere).
std::optional<eventstore::NewEvent> completed(const State& s, const Rendered& r, money::Micros charged, TimePoint at);
std::optional<eventstore::NewEvent> failed(const State& s, const std::string& code, const std::string& message,
                                           TimePoint at);

// The stored view of a clip just requested (the projection's first row).
Json requested_view(const Json& requested_event_data);

// Where things are kept (object-store keys).
std::string source_audio_key(int64_t transcription_id);  // link sources: the audio track of the fetched media
// The audio a clip is cut from: an upload's own file ("uploads/<id>"), else
// source_audio_key().
std::string audio_key(int64_t transcription_id, const std::optional<std::string>& upload_id);
std::string source_video_key(int64_t transcription_id);  // link sources: the source video, fetched for clips
std::string file_key(int64_t transcription_id, int64_t clip_id, const std::string& name);

// Signed links to a clip's files, served by GET /clips/files/{clipId}/{name}.
// The server-side secret (common/secrets.h) that signs them.
inline constexpr const char* kLinkSecretName = "clip_links";
std::string link_signature(const std::string& secret, int64_t clip_id, const std::string& name, int64_t expires_unix);
bool verify_link(const std::string& secret, int64_t clip_id, const std::string& name, int64_t expires_unix,
                 const std::string& signature, int64_t now_unix);

// The public Clip (spec, Resources). `view` is the clip's fields as stored:
// the ClipRequested payload's options plus status, duration_seconds,
// charge_micros, file {name, content_type}, error, created_at, completed_at.
// Links are signed for an hour from `now` when the clip is completed.
Json to_json(const Json& view, int64_t clip_id, const std::string& public_url, const std::string& link_secret,
             TimePoint now);

}  // namespace scribe::clip
