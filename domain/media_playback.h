#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "eventstore/event.h"

// What the web console's player can play of a transcription's stored media,
// and the rules around it (GET /api/v1/transcriptions/{id}/media, POST
// .../video). Pure: media/source_media.cpp probes, workers/rendition_worker.cpp
// transcodes, api/media/ serves.
namespace scribe::playback {

// One stream as ffprobe reports it.
struct Stream {
  std::string type;           // codec_type: audio, video, subtitle, data...
  std::string codec;          // codec_name: h264, aac, pcm_s16le...
  bool attached_pic = false;  // cover art stored as a video stream (MP3, M4A)
};

// A file as ffprobe reports it: format_name is its comma-separated list of
// demuxer names ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "avi"...).
struct Probe {
  std::string format_name;
  std::vector<Stream> streams;
  std::optional<double> duration_seconds;
};

enum class Kind { Audio, Video };
const char* to_string(Kind k);  // "audio" | "video"

struct Decision {
  Kind kind = Kind::Audio;  // video when a real (not cover-art) video stream is there
  bool playable = false;    // a browser's <audio>/<video> plays the file as it is
  // The Content-Type the file is served with when playable ("" otherwise).
  std::string content_type;
};

// Whether Chromium (and the other current browsers, where they agree) plays
// the file as it is, from its container and codecs. Played as they are:
//  - MP3 (mp3), ADTS AAC (aac), FLAC (flac), WAV with PCM (pcm_u8, pcm_s16le,
//    pcm_s24le, pcm_s32le, pcm_f32le), Ogg with vorbis, opus or flac audio;
//  - MP4/M4A/QuickTime (ffprobe's "mov,mp4,...") with H.264 video and AAC or
//    MP3 audio (a .mov of H.264 plays; one of ProRes, DV or HEVC does not);
//  - Matroska/WebM with VP8, VP9 or AV1 video and Opus or Vorbis audio.
// Anything else (AVI, WMV/ASF, FLV, MPEG-TS, AMR, AC-3, PCM in a QuickTime,
// H.264 in Matroska...) is not, and gets a rendition. Cover art, subtitle
// and data streams are ignored. A file with neither audio nor video is not
// playable.
Decision decide(const Probe& p);

// The rendition made of a file that is not playable: AAC in an M4A for
// audio, H.264 and AAC in an MP4 for video (both with the index first, so a
// player starts and seeks at once).
std::string rendition_content_type(Kind k);  // "audio/mp4" | "video/mp4"

// An added original video must be the recording the transcript is of: its
// length may differ from the transcription's by at most
// max(1 s, 0.5% of the transcription's length) (containers round durations,
// and an extracted audio track may lose a frame or a priming delay).
double duration_tolerance(double transcription_seconds);
bool durations_match(double transcription_seconds, double video_seconds);

// The rules of POST .../video for an upload offered as the transcription's
// original video, once the upload is known to be the caller's and complete:
// the transcription's source is an upload (400 invalid_request, reason
// not_an_upload: a link's video is fetched for its clips; a realtime session
// has none); the upload has a real video stream (400 invalid_request on
// upload_id, reason no_video_stream) and a length (reason no_duration) that
// matches the transcription's (reason duration_mismatch, with both lengths
// and the tolerance). A transcription whose length is not known yet is 409
// not_ready.
void check_added_video(const std::string& transcription_source, std::optional<double> transcription_seconds,
                       const std::string& upload_id, const Probe& video);
// TranscriptionVideoAdded {transcription_id, account_id, upload_id, video_duration_seconds, added_at}
eventstore::NewEvent video_added(int64_t transcription_id, int64_t account_id, const std::string& upload_id,
                                 double video_seconds, TimePoint at);

// Where a transcription's media is stored (object-store keys), by source
// name: "upload" (the uploaded file, uploads/<upload_id>), "video" (the
// original video added to an upload, or a link's video fetched for a video
// clip: clip::source_video_key) and "audio" (the audio kept of a link or a
// realtime session: clip::source_audio_key). nullopt for another name, or
// "upload" without an upload id.
std::optional<std::string> source_key(int64_t transcription_id, const std::string& source,
                                      const std::optional<std::string>& upload_id);
// The sources the player is given, first stored first: an upload's added
// video, else the upload; a link's video, else its audio; a realtime
// session's audio.
std::vector<std::string> preferred_sources(const std::string& transcription_source);
// The rendition of a source, under the transcription's prefix (deleted with it).
std::string rendition_key(int64_t transcription_id, const std::string& source);

// The signed, expiring links GET /media/files/{id}/{name} serves: `name` is
// a source ("upload", "video", "audio") or its rendition ("<source>.playable").
// Signed with the server secret kLinkSecretName (common/secrets.h).
inline constexpr const char* kLinkSecretName = "media_links";
inline constexpr const char* kRenditionSuffix = ".playable";
std::string link_signature(const std::string& secret, int64_t transcription_id, const std::string& name,
                           int64_t expires_unix);
bool verify_link(const std::string& secret, int64_t transcription_id, const std::string& name, int64_t expires_unix,
                 const std::string& signature, int64_t now_unix);
std::string link(const std::string& public_url, const std::string& secret, int64_t transcription_id,
                 const std::string& name, int64_t expires_unix);

}  // namespace scribe::playback
