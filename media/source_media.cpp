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

bool has_video_stream(const std::string& path, const std::string& ffprobe, std::chrono::seconds timeout) {
  // "file:" keeps ffprobe from reading the name as an option or another protocol.
  const std::vector<std::string> argv = {
      ffprobe, "-v",   "error",       "-show_entries", "stream=codec_type:stream_disposition=attached_pic",
      "-of",   "json", "file:" + path};
  const ProcessResult r = run_process(argv, timeout);
  if (!r.ok())
    throw Error("internal_error", "probing '" + path + "' for video: " + describe_failure(ffprobe, r, timeout));
  const Json j = Json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw Error("internal_error", "probing '" + path + "' for video: unreadable ffprobe output");
  }
  for (const auto& s : j.value("streams", Json::array())) {
    if (!s.is_object() || s.value("codec_type", "") != "video") continue;
    const Json disposition = s.value("disposition", Json::object());
    if (disposition.is_object() && disposition.value("attached_pic", 0) == 1) continue;
    return true;
  }
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

}  // namespace scribe::media
