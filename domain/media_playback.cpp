#include "domain/media_playback.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/error.h"
#include "domain/clip.h"
#include "domain/events.h"
#include "domain/signed_link.h"
#include "domain/transcript_artifact.h"

namespace scribe::playback {
namespace {

bool in(const std::set<std::string>& s, const std::string& v) { return s.count(v) > 0; }

// The demuxer names of ffprobe's format_name, split on commas.
std::set<std::string> demuxers(const std::string& format_name) {
  std::set<std::string> out;
  size_t start = 0;
  while (start <= format_name.size()) {
    const size_t comma = format_name.find(',', start);
    const size_t end = comma == std::string::npos ? format_name.size() : comma;
    if (end > start) out.insert(format_name.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A family of containers: which codecs play in it, and the type it is served as.
struct Family {
  std::set<std::string> video_codecs;
  std::set<std::string> audio_codecs;
  const char* audio_type;
  const char* video_type;  // nullptr: the container carries no video we play
};

std::optional<Family> family_of(const std::string& format_name) {
  const auto d = demuxers(format_name);
  if (d.count("mp3")) return Family{{}, {"mp3"}, "audio/mpeg", nullptr};
  if (d.count("aac")) return Family{{}, {"aac"}, "audio/aac", nullptr};
  if (d.count("flac")) return Family{{}, {"flac"}, "audio/flac", nullptr};
  if (d.count("wav"))
    return Family{{}, {"pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le"}, "audio/wav", nullptr};
  if (d.count("ogg")) return Family{{}, {"vorbis", "opus", "flac"}, "audio/ogg", nullptr};
  if (d.count("mov") || d.count("mp4")) return Family{{"h264"}, {"aac", "mp3"}, "audio/mp4", "video/mp4"};
  if (d.count("matroska") || d.count("webm"))
    return Family{{"vp8", "vp9", "av1"}, {"opus", "vorbis"}, "audio/webm", "video/webm"};
  return std::nullopt;
}

}  // namespace

const char* to_string(Kind k) { return k == Kind::Video ? "video" : "audio"; }

Decision decide(const Probe& p) {
  Decision d;
  bool has_audio = false;
  for (const auto& s : p.streams) {
    if (s.type == "video" && !s.attached_pic) d.kind = Kind::Video;
    if (s.type == "audio") has_audio = true;
  }
  if (!has_audio && d.kind == Kind::Audio) return d;  // nothing to play
  const auto family = family_of(p.format_name);
  if (!family) return d;
  if (d.kind == Kind::Video && !family->video_type) return d;
  for (const auto& s : p.streams) {
    if (s.type == "audio" && !in(family->audio_codecs, s.codec)) return d;
    if (s.type == "video" && !s.attached_pic && !in(family->video_codecs, s.codec)) return d;
  }
  d.playable = true;
  d.content_type = d.kind == Kind::Video ? family->video_type : family->audio_type;
  return d;
}

std::string rendition_content_type(Kind k) { return k == Kind::Video ? "video/mp4" : "audio/mp4"; }

double duration_tolerance(double transcription_seconds) {
  return std::max(1.0, 0.005 * std::max(0.0, transcription_seconds));
}

bool durations_match(double transcription_seconds, double video_seconds) {
  if (!std::isfinite(transcription_seconds) || !std::isfinite(video_seconds) || video_seconds <= 0) return false;
  return std::fabs(transcription_seconds - video_seconds) <= duration_tolerance(transcription_seconds);
}

void check_added_video(const std::string& transcription_source, std::optional<double> transcription_seconds,
                       const std::string& upload_id, const Probe& video) {
  if (transcription_source != "upload")
    throw Error("invalid_request",
                "only a transcription of an uploaded file takes an added video (this one's source is " +
                    transcription_source + "; a link's video is fetched for its video clips)",
                {{"reason", "not_an_upload"}});
  if (!transcription_seconds)
    throw Error("not_ready", "the transcription's length is not known yet; retry once it is measured");
  auto invalid = [&](const std::string& reason, const std::string& message, Json extras = Json::object()) {
    extras["field"] = "upload_id";
    extras["reason"] = reason;
    return Error("invalid_request", message, std::move(extras));
  };
  if (decide(video).kind != Kind::Video)
    throw invalid("no_video_stream", "upload '" + upload_id + "' has no video stream (cover art does not count)");
  if (!video.duration_seconds) throw invalid("no_duration", "the length of upload '" + upload_id + "' cannot be read");
  if (!durations_match(*transcription_seconds, *video.duration_seconds)) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "upload '%s' is %.2f s long and the transcription %.2f s; an added video must be "
                  "the same recording (within %.2f s)",
                  upload_id.c_str(), *video.duration_seconds, *transcription_seconds,
                  duration_tolerance(*transcription_seconds));
    throw invalid("duration_mismatch", buf,
                  {{"video_duration_seconds", *video.duration_seconds},
                   {"transcription_duration_seconds", *transcription_seconds},
                   {"tolerance_seconds", duration_tolerance(*transcription_seconds)}});
  }
}

eventstore::NewEvent video_added(int64_t transcription_id, int64_t account_id, const std::string& upload_id,
                                 double video_seconds, TimePoint at) {
  return {events::kTranscriptionVideoAdded,
          {{"transcription_id", transcription_id},
           {"account_id", account_id},
           {"upload_id", upload_id},
           {"video_duration_seconds", video_seconds},
           {"added_at", to_iso8601(at)}}};
}

std::optional<std::string> source_key(int64_t transcription_id, const std::string& source,
                                      const std::optional<std::string>& upload_id) {
  if (source == "upload")
    return upload_id ? std::optional<std::string>(clip::audio_key(transcription_id, upload_id)) : std::nullopt;
  if (source == "video") return clip::source_video_key(transcription_id);
  if (source == "audio") return clip::source_audio_key(transcription_id);
  return std::nullopt;
}

std::vector<std::string> preferred_sources(const std::string& transcription_source) {
  if (transcription_source == "upload") return {"video", "upload"};
  if (transcription_source == "realtime") return {"audio"};
  return {"video", "audio"};
}

std::string rendition_key(int64_t transcription_id, const std::string& source) {
  return transcript::transcription_prefix(transcription_id) + "media/" + source + kRenditionSuffix;
}

namespace {
std::string link_scope(int64_t transcription_id, const std::string& name) {
  return "media-file:" + std::to_string(transcription_id) + ":" + name;
}
}  // namespace

std::string link_signature(const std::string& secret, int64_t transcription_id, const std::string& name,
                           int64_t expires_unix) {
  return signed_link::signature(secret, link_scope(transcription_id, name), expires_unix);
}

bool verify_link(const std::string& secret, int64_t transcription_id, const std::string& name, int64_t expires_unix,
                 const std::string& signature, int64_t now_unix) {
  return signed_link::verify(secret, link_scope(transcription_id, name), expires_unix, signature, now_unix);
}

std::string link(const std::string& public_url, const std::string& secret, int64_t transcription_id,
                 const std::string& name, int64_t expires_unix) {
  return public_url + "/media/files/" + std::to_string(transcription_id) + "/" + name +
         "?expires=" + std::to_string(expires_unix) +
         "&signature=" + link_signature(secret, transcription_id, name, expires_unix);
}

}  // namespace scribe::playback
