#include "media/media_probe.h"

#include "common/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "common/text.h"
#include "media/process.h"

namespace scribe::media {
namespace {

constexpr int kDefaultBusyRetryAfter = 30;
constexpr int kYtdlpBusyRetryAfter = 60;
constexpr int kInfraRetryAfter = 30;

// ---- helpers ---------------------------------------------------------------

int clamp_retry_after(std::optional<int> v, int fallback) {
  return std::clamp(v.value_or(fallback), 1, kMaxRetryAfterSeconds);
}

Error busy(const std::string& message, int retry_after) {
  return Error("source_busy", message, {{"retry_after", std::clamp(retry_after, 1, kMaxRetryAfterSeconds)}});
}

Error infra(const std::string& code, const std::string& message) {
  return Error(code, message, {{"retry_after", kInfraRetryAfter}});
}

// The last path segment of a URL, percent-decoded (a malformed escape is kept
// as it is: a name to show, not one to refuse), without control characters.
std::string file_name_of(const std::string& url) {
  auto parsed = parse_http_url(url);
  if (!parsed) return "";
  std::string path = parsed->path_and_query.substr(0, parsed->path_and_query.find('?'));
  auto slash = path.rfind('/');
  std::string name;
  percent_decode(slash == std::string::npos ? path : path.substr(slash + 1), name, {.keep_malformed = true});
  name.erase(std::remove_if(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }),
             name.end());
  if (name.size() > 200) name.resize(200);
  return name;
}

std::string extension_of(const std::string& file_name) {
  auto dot = file_name.rfind('.');
  if (dot == std::string::npos || dot + 1 >= file_name.size()) return "";
  std::string ext = to_lower(file_name.substr(dot + 1));
  if (ext.size() > 5 || !std::all_of(ext.begin(), ext.end(), ::isalnum)) return "";
  return "." + ext;
}

std::string make_temp_file(const std::string& work_dir, const std::string& suffix) {
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  std::string templ = (std::filesystem::path(work_dir) / ("media-XXXXXX" + suffix)).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  int fd = mkstemps(buf.data(), static_cast<int>(suffix.size()));
  if (fd < 0) throw Error("internal_error", "could not create a temporary file in the media work directory");
  close(fd);
  return std::string(buf.data());
}

std::string last_error_line(const std::string& err) {
  std::string best;
  std::size_t pos = 0;
  while (pos < err.size()) {
    auto nl = err.find('\n', pos);
    if (nl == std::string::npos) nl = err.size();
    std::string line = err.substr(pos, nl - pos);
    if (line.rfind("ERROR:", 0) == 0) best = line;
    pos = nl + 1;
  }
  if (best.empty()) {
    auto t = err.find_last_not_of(" \r\n\t");
    if (t != std::string::npos) {
      auto s = err.rfind('\n', t);
      best = err.substr(s == std::string::npos ? 0 : s + 1, t + 1 - (s == std::string::npos ? 0 : s + 1));
    }
  }
  if (best.size() > 300) best = best.substr(0, 300) + "…";
  return best;
}

bool contains_any(const std::string& haystack, std::initializer_list<const char*> needles) {
  for (const char* n : needles) {
    if (haystack.find(n) != std::string::npos) return true;
  }
  return false;
}

// The URL policy applied to a media link: refusals are invalid_request on
// "url"; a host that does not resolve is an unavailable source.
void check_media_url(const UrlPolicy& policy, const std::string& url) {
  if (auto why = policy.violation(url)) {
    if (why->kind == UrlViolation::Kind::kUnresolvable) {
      throw Error("video_unavailable_probe", "the media could not be fetched: its host does not resolve");
    }
    throw Error::invalid("url", "url " + why->reason);
  }
}

}  // namespace

// ---- ffprobe ----------------------------------------------------------------

ProbeResult probe_file(const std::string& path, const std::string& field, const std::string& ffprobe,
                       std::chrono::seconds timeout) {
  const std::string not_playable = field + " is not a playable audio or video file";
  // "file:" keeps ffprobe from reading the name as an option or another protocol.
  std::vector<std::string> argv = {ffprobe,
                                   "-v",
                                   "error",
                                   "-select_streams",
                                   "a",
                                   "-read_intervals",
                                   "%+#1",
                                   "-show_entries",
                                   "format=duration:format_tags:stream=codec_type:packet=stream_index",
                                   "-of",
                                   "json",
                                   "file:" + path};
  ProcessResult pr = run_process(argv, timeout);
  if (!pr.started) {
    throw infra("probe_runtime_misconfigured",
                "media probe runtime misconfigured: cannot run " + ffprobe + ": " + std::strerror(pr.spawn_errno));
  }
  if (pr.timed_out) throw Error::invalid(field, not_playable + " (probing timed out)");
  if (pr.exit_code != 0) throw Error::invalid(field, not_playable);
  Json j = Json::parse(pr.out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw infra("probe_runtime_misconfigured", "media probe runtime misconfigured: unreadable ffprobe output");
  }
  bool has_audio = false;
  if (j.contains("streams") && j["streams"].is_array()) {
    for (const auto& s : j["streams"]) {
      if (s.is_object() && s.value("codec_type", "") == "audio") has_audio = true;
    }
  }
  if (!has_audio) throw Error::invalid(field, not_playable + " (no audio stream)");
  if (!j.contains("packets") || !j["packets"].is_array() || j["packets"].empty()) {
    throw Error::invalid(field, not_playable + " (no readable audio)");
  }
  double duration = 0;
  const Json format = j.value("format", Json::object());
  if (format.is_object() && format.contains("duration")) {
    const Json& d = format["duration"];
    if (d.is_string()) {
      const std::string text = d.get<std::string>();
      char* end = nullptr;
      duration = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end) duration = 0;
    } else if (d.is_number()) {
      duration = d.get<double>();
    }
  }
  if (!(duration > 0) || duration > 1e7) throw Error::invalid(field, not_playable + " (no duration)");
  ProbeResult result;
  result.duration_seconds = duration;
  result.local_path = path;
  if (format.is_object() && format.contains("tags") && format["tags"].is_object()) {
    for (const auto& [key, value] : format["tags"].items()) {
      if (to_lower(key) == "title" && value.is_string() && !value.get<std::string>().empty()) {
        result.title = value.get<std::string>();
        break;
      }
    }
  }
  return result;
}

// ---- yt-dlp stderr → spec codes ----------------------------------------------

std::string classify_ytdlp_error(const std::string& stderr_text) {
  const std::string s = to_lower(stderr_text);
  if (contains_any(s, {"proxy authentication required", "http error 407"})) return "probe_proxy_auth_quota";
  if (contains_any(s, {"proxyerror", "unable to connect to proxy", "cannot connect to proxy",
                       "tunnel connection failed", "proxy error"})) {
    return "probe_proxy_connectivity";
  }
  if (contains_any(s, {"private video", "video is private"})) return "video_private";
  if (contains_any(s, {"members-only", "members only", "join this channel", "channel's members"})) {
    return "video_members_only";
  }
  if (contains_any(
          s, {"sign in to confirm your age", "age-restricted", "age restricted", "inappropriate for some users"})) {
    return "video_age_restricted";
  }
  if (contains_any(s, {"http error 429", "too many requests", "not a bot", "http error 503"})) return "source_busy";
  if (contains_any(s, {"timed out", "timeout"})) return "probe_proxy_connectivity";
  if (contains_any(
          s, {"video unavailable", "removed", "does not exist", "unsupported url", "unable to extract", "http error 4",
              "not available", "no video formats", "not a valid url", "connection refused", "name or service not known",
              "name resolution", "no address associated", "unable to download webpage", "terminated", "not found"})) {
    return "video_unavailable_probe";
  }
  // Any other error yt-dlp reports about the link ("ERROR: ..." lines); a crash
  // or traceback without one means the runtime itself is broken.
  if (stderr_text.rfind("ERROR:", 0) == 0 || stderr_text.find("\nERROR:") != std::string::npos) {
    return "video_unavailable_probe";
  }
  return "probe_runtime_misconfigured";
}

// ---- MediaProbe ---------------------------------------------------------------

MediaProbe::MediaProbe(UrlPolicy policy, std::string work_dir, MediaProbeOptions options)
    : policy_(std::move(policy)), work_dir_(std::move(work_dir)), options_(std::move(options)) {}

ProbeResult MediaProbe::probe(const std::string& source, const std::string& url) const {
  if (source == "external_url") return probe_download(url);
  if (source == "video_site" || source == "platform_url") return probe_ytdlp(url, false);
  throw Error::invalid("source", "source must be one of video_site, platform_url, external_url for a link probe");
}

ProbeResult MediaProbe::fetch(const std::string& source, const std::string& url) const {
  if (source == "external_url") return probe_download(url, false);
  if (source == "video_site" || source == "platform_url") return probe_ytdlp(url, true);
  throw Error::invalid("source", "source must be one of video_site, platform_url, external_url for a link fetch");
}

ProbeResult MediaProbe::probe_download(const std::string& url, bool run_ffprobe) const {
  check_media_url(policy_, url);  // refused before any connection
  const std::string name = file_name_of(url);
  const std::string path = make_temp_file(work_dir_, extension_of(name));
  auto discard = [&] { std::remove(path.c_str()); };

  HttpClient client(policy_, "scribe-media/1");
  DownloadResult dl;
  try {
    dl = client.download(url, path, options_.download);
  } catch (const HttpError& e) {
    discard();
    switch (e.kind()) {
      case HttpError::Kind::kRefused:
        throw Error::invalid("url", std::string("url leads to a non-public address: ") + e.what());
      case HttpError::Kind::kTimeout:
        throw infra("probe_proxy_connectivity", std::string("fetching the media timed out: ") + e.what());
      case HttpError::Kind::kTooLarge:
        throw Error::invalid(
            "url", "url points to a file larger than " + std::to_string(options_.download.max_bytes) + " bytes");
      case HttpError::Kind::kLocalIo:
        throw Error("internal_error", "could not store the downloaded media");
      case HttpError::Kind::kUnreachable:
      case HttpError::Kind::kTooManyRedirects:
      case HttpError::Kind::kBadRedirect:
        throw Error("video_unavailable_probe", std::string("the media could not be fetched: ") + e.what());
    }
    throw Error("video_unavailable_probe", std::string("the media could not be fetched: ") + e.what());
  }
  if (!dl.ok()) {
    discard();
    const std::string status = std::to_string(dl.status);
    if (dl.status == 429 || dl.status == 502 || dl.status == 503 || dl.status == 504) {
      throw busy("the media host is refusing requests now (HTTP " + status + ")",
                 clamp_retry_after(dl.retry_after, kDefaultBusyRetryAfter));
    }
    throw Error("video_unavailable_probe", "the media could not be fetched (HTTP " + status + ")");
  }
  ProbeResult result;
  result.local_path = path;
  // The worker's fetch leaves judging the file to the decoder, which tells
  // apart undecodable, truncated and audio-less files.
  if (run_ffprobe) {
    try {
      result = probe_file(path, "url", options_.ffprobe, options_.ffprobe_timeout);
    } catch (...) {
      discard();
      throw;
    }
  }
  if (!result.title) {
    // The file name: the final URL's when it looks like a file (CDN links,
    // "download?id=" pages that redirect), else the submitted URL's.
    std::string final_name = file_name_of(dl.final_url);
    std::string fallback = !extension_of(final_name).empty() ? final_name : !name.empty() ? name : final_name;
    if (!fallback.empty()) result.title = fallback;
  }
  return result;
}

ProbeResult MediaProbe::probe_ytdlp(const std::string& url, bool need_file) const {
  check_media_url(policy_, url);
  std::vector<std::string> argv = {
      options_.ytdlp, "--dump-single-json", "--no-playlist", "--no-warnings", "--socket-timeout", "20", "--", url};
  ProcessResult pr = run_process(argv, options_.ytdlp_timeout);
  if (!pr.started) {
    throw infra("probe_runtime_misconfigured", "video link probe runtime misconfigured: cannot run " + options_.ytdlp +
                                                   ": " + std::strerror(pr.spawn_errno));
  }
  if (pr.timed_out) throw infra("probe_proxy_connectivity", "video link probe timed out");
  if (pr.output_overflow) throw infra("probe_runtime_misconfigured", "video link probe produced too much output");
  if (pr.exit_code != 0) {
    const std::string code = classify_ytdlp_error(pr.err);
    const std::string detail = last_error_line(pr.err);
    if (code == "source_busy") {
      throw busy("the video platform is refusing requests for this video now: " + detail, kYtdlpBusyRetryAfter);
    }
    if (code == "probe_proxy_connectivity" || code == "probe_proxy_auth_quota" ||
        code == "probe_runtime_misconfigured") {
      std::string msg =
          code == "probe_runtime_misconfigured"
              ? "video link probe runtime misconfigured (exit " +
                    (pr.term_signal ? "signal " + std::to_string(pr.term_signal) : std::to_string(pr.exit_code)) + ")"
              : "video link lookup failed";
      throw infra(code, detail.empty() ? msg : msg + ": " + detail);
    }
    static const std::map<std::string, std::string> kMessages = {
        {"video_private", "the video is private"},
        {"video_members_only", "the video is members-only; submit it with source upload"},
        {"video_age_restricted", "the video is age-restricted; submit it with source upload"},
        {"video_unavailable_probe", "the video is unavailable"},
    };
    auto it = kMessages.find(code);
    std::string msg = it == kMessages.end() ? "the video is unavailable" : it->second;
    throw Error(code, detail.empty() ? msg : msg + " (" + detail + ")");
  }

  Json j = Json::parse(pr.out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw infra("probe_runtime_misconfigured", "video link probe runtime misconfigured: unreadable yt-dlp output");
  }
  if (j.value("_type", "video") == "playlist") {
    throw Error("video_unavailable_probe", "the link is a playlist or channel, not a single video");
  }
  std::optional<std::string> title;
  if (j.contains("title") && j["title"].is_string() && !j["title"].get<std::string>().empty()) {
    title = j["title"].get<std::string>();
  }
  if (j.contains("duration") && j["duration"].is_number()) {
    double d = j["duration"].get<double>();
    if (d > 0 && !need_file) return ProbeResult{d, title, ""};
  }
  if (j.value("is_live", false) == true) {
    throw Error("video_unavailable_probe", "the link is a live stream; only recorded media can be transcribed");
  }
  // No duration in the metadata (direct media links through the generic
  // extractor), or the worker needs the media: fetch it, through the same
  // policy and limits as any other download.
  auto direct = [](const Json& f) -> std::string {
    if (!f.is_object() || !f.contains("url") || !f["url"].is_string()) return "";
    std::string proto = f.value("protocol", "");
    if (proto != "http" && proto != "https") return "";
    return f["url"].get<std::string>();
  };
  std::string media_url = direct(j);
  if (media_url.empty() && j.contains("requested_formats") && j["requested_formats"].is_array()) {
    for (const auto& f : j["requested_formats"]) {
      if (f.is_object() && f.value("acodec", "") != "none" && !direct(f).empty()) {
        media_url = direct(f);
        break;
      }
    }
  }
  if (media_url.empty()) throw Error("video_unavailable_probe", "the video's duration could not be determined");
  ProbeResult result = probe_download(media_url, !need_file);
  if (title && (!result.title || result.title == file_name_of(media_url))) result.title = title;
  return result;
}

}  // namespace scribe::media
