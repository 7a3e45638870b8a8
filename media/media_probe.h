#pragma once
#include <chrono>
#include <optional>
#include <string>

#include "common/http_client.h"
#include "domain/limits.h"
#include "common/url_policy.h"

// Media intake for link sources (and probing of uploaded files): what POST
// /transcriptions and POST /quotes call to learn a source's duration and title.
// Every failure is a scribe::Error carrying one of the spec's codes:
//   invalid_request (field "url" / the given field): malformed or non-public URL,
//       file too large, not a playable audio or video file;
//   video_private, video_members_only, video_age_restricted,
//       video_unavailable_probe (400, permanent);
//   source_busy (503, extras.retry_after <= 300);
//   probe_proxy_connectivity, probe_proxy_auth_quota, probe_runtime_misconfigured
//       (503, extras.retry_after);
//   internal_error (500) for local disk failures.
namespace scribe::media {

inline constexpr int kMaxRetryAfterSeconds = 300;

struct ProbeResult {
  double duration_seconds = 0;
  std::optional<std::string> title;
  // The downloaded file (owned by the caller from now on, inside work_dir);
  // empty when yt-dlp metadata alone gave the duration.
  std::string local_path;
};

struct MediaProbeOptions {
  std::string ytdlp = "yt-dlp";     // SCRIBE_YTDLP: binary name (looked up on PATH) or path
  std::string ffprobe = "ffprobe";  // SCRIBE_FFPROBE
  // The spec's 1 GB cap; SCRIBE_MEDIA_DOWNLOAD_TIMEOUT_SECONDS sets total_timeout (default 600).
  DownloadLimits download{limits::kMaxUploadBytes};
  std::chrono::seconds ytdlp_timeout{60};    // SCRIBE_YTDLP_TIMEOUT_SECONDS
  std::chrono::seconds ffprobe_timeout{60};  // SCRIBE_FFPROBE_TIMEOUT_SECONDS
};

class MediaProbe {
 public:
  explicit MediaProbe(UrlPolicy policy, std::string work_dir, MediaProbeOptions options = {});

  // source: "external_url" (download with HttpClient, then ffprobe), or
  // "video_site" / "platform_url" (yt-dlp metadata; when it carries no duration,
  // as for direct media links, the media is downloaded and ffprobed).
  // Throws scribe::Error; an unknown source is invalid_request on "source".
  ProbeResult probe(const std::string& source, const std::string& url) const;

  // The worker's download: leaves the media in a local file (local_path),
  // also when yt-dlp's metadata gave the duration, without ffprobe (the
  // decoder judges the file; duration_seconds is then 0).
  ProbeResult fetch(const std::string& source, const std::string& url) const;

  const MediaProbeOptions& options() const { return options_; }

 private:
  ProbeResult probe_download(const std::string& url, bool run_ffprobe = true) const;
  ProbeResult probe_ytdlp(const std::string& url, bool need_file) const;

  UrlPolicy policy_;
  std::string work_dir_;
  MediaProbeOptions options_;
};

// ffprobe of a local file (the upload path reuses it). The file must have an
// audio stream with at least one readable packet and a positive duration, else
// Error::invalid(field, "<field> is not a playable audio or video file").
// Title: the container's title tag, if any; local_path is `path`.
// ffprobe missing or failing to run: probe_runtime_misconfigured (503).
ProbeResult probe_file(const std::string& path, const std::string& field = "upload_id",
                       const std::string& ffprobe = "ffprobe", std::chrono::seconds timeout = std::chrono::seconds(60));

// The yt-dlp stderr → error mapping (exposed for tests and for logs):
// the spec code for a failed yt-dlp run, e.g. "video_private".
std::string classify_ytdlp_error(const std::string& stderr_text);

}  // namespace scribe::media
