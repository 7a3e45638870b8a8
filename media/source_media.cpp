#include "media/source_media.h"

#include <filesystem>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "media/process.h"

namespace scribe::media {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

playback::Probe probe_streams(const std::string& path, const std::string& ffprobe, std::chrono::seconds timeout) {
  // "file:" keeps ffprobe from reading the name as an option or another protocol.
  const std::vector<std::string> argv = {ffprobe,
                                         "-v",
                                         "error",
                                         "-show_entries",
                                         "format=format_name,duration:stream=codec_type,codec_name:stream_"
                                         "disposition=attached_pic",
                                         "-of",
                                         "json",
                                         "file:" + path};
  const ProcessResult r = run_process(argv, timeout);
  if (!r.ok()) throw Error("internal_error", "probing '" + path + "': " + describe_failure(ffprobe, r, timeout));
  const Json j = Json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error("internal_error", "probing '" + path + "': unreadable ffprobe output");
  playback::Probe p;
  const Json format = j.value("format", Json::object());
  if (format.is_object()) {
    p.format_name = format.value("format_name", "");
    // ffprobe writes the duration as a string ("4.123000"), absent when unknown.
    if (format.contains("duration") && format.at("duration").is_string()) {
      try {
        p.duration_seconds = std::stod(format.at("duration").get<std::string>());
      } catch (const std::exception&) {
      }
    }
  }
  for (const auto& s : j.value("streams", Json::array())) {
    if (!s.is_object()) continue;
    const Json disposition = s.value("disposition", Json::object());
    p.streams.push_back({s.value("codec_type", ""), s.value("codec_name", ""),
                         disposition.is_object() && disposition.value("attached_pic", 0) == 1});
  }
  return p;
}

bool has_video_stream(const std::string& path, const std::string& ffprobe, std::chrono::seconds timeout) {
  for (const auto& s : probe_streams(path, ffprobe, timeout).streams)
    if (s.type == "video" && !s.attached_pic) return true;
  return false;
}

void extract_audio(const std::string& in, const std::string& out, const std::string& ffmpeg,
                   std::chrono::seconds timeout) {
  namespace fs = std::filesystem;
  const auto deadline = Clock::now() + timeout;
  const std::string partial = out + ".part";
  std::error_code ec;
  auto attempt = [&](const std::vector<std::string>& codec) {
    // The output's name ends in .part, so the muxer is named rather than guessed.
    std::vector<std::string> argv = {ffmpeg, "-nostdin",   "-hide_banner", "-loglevel", "error", "-y",
                                     "-i",   "file:" + in, "-vn",          "-map",      "0:a:0"};
    argv.insert(argv.end(), codec.begin(), codec.end());
    argv.insert(argv.end(), {"-f", "matroska", "file:" + partial});
    ProcessResult r = run_process(argv, left_until(deadline));
    if (!r.ok()) fs::remove(partial, ec);
    return r;
  };
  ProcessResult r = attempt({"-c:a", "copy"});
  // Some streams cannot be copied into Matroska as they are (or have
  // timestamps its muxer refuses); re-encoded they can. Not worth a try when
  // there is no audio at all or no time left.
  const bool no_audio = r.err.find("matches no streams") != std::string::npos;
  if (!r.ok() && r.started && !r.timed_out && !no_audio) r = attempt({"-c:a", "aac", "-b:a", "128k"});
  if (!r.ok()) {
    throw Error("internal_error", "extracting the audio of '" + in + "': " + describe_failure(ffmpeg, r, timeout));
  }
  fs::rename(partial, out, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(partial, ec);
    throw Error("internal_error", "extracting the audio of '" + in + "': cannot move it to '" + out + "': " + why);
  }
}

void make_rendition(const std::string& in, const std::string& out, playback::Kind kind, int threads,
                    const std::atomic<bool>* cancel, const std::string& ffmpeg, std::chrono::seconds timeout) {
  namespace fs = std::filesystem;
  const std::string partial = out + ".part";
  std::vector<std::string> argv = {
      ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
      "-y",   "-i",       "file:" + in,   "-threads",  std::to_string(std::max(0, threads))};
  if (kind == playback::Kind::Video) {
    // "?" keeps a silent video valid; the scale keeps sizes even (4:2:0
    // needs them) and bounds the work of a 4K upload.
    argv.insert(argv.end(),
                {"-map", "0:v:0", "-map", "0:a:0?", "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt",
                 "yuv420p", "-vf", "scale='min(1280,iw)':-2:flags=bicubic,setsar=1", "-c:a", "aac", "-b:a", "128k"});
  } else {
    argv.insert(argv.end(), {"-vn", "-map", "0:a:0", "-c:a", "aac", "-b:a", "128k"});
  }
  argv.insert(argv.end(),
              {"-movflags", "+faststart", "-f", kind == playback::Kind::Video ? "mp4" : "ipod", "file:" + partial});
  ProcessLimits limits;
  limits.cancel = cancel;
  const ProcessResult r = run_process(argv, timeout, limits);
  std::error_code ec;
  if (!r.ok()) {
    fs::remove(partial, ec);
    throw Error("internal_error", "making a playable copy of '" + in + "': " + describe_failure(ffmpeg, r, timeout));
  }
  fs::rename(partial, out, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(partial, ec);
    throw Error("internal_error", "making a playable copy of '" + in + "': cannot move it to '" + out + "': " + why);
  }
}

}  // namespace scribe::media
