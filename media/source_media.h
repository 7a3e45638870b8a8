#pragma once
#include <chrono>
#include <string>

// What a job keeps of an uploaded or fetched source besides the transcript:
// whether it has a picture worth a video clip, and its audio alone, so that
// audio clips and audiograms need not keep (or read through) the whole video.
namespace scribe::media {

// True when `path` has a real video stream. Cover art (a picture stored as a
// video stream with the attached_pic disposition, as MP3 and M4A files carry)
// does not count. Throws scribe::Error("internal_error") when ffprobe cannot
// run, times out or cannot read the file (it is probed before, so an
// unreadable file here is not the user's doing).
bool has_video_stream(const std::string& path, const std::string& ffprobe = "ffprobe",
                      std::chrono::seconds timeout = std::chrono::seconds(30));

// Writes the first audio stream of `in` to `out` as a Matroska audio file
// (.mka), copied as it is; when the codec cannot be copied, re-encoded to AAC
// at 128 kb/s. FFmpeg writes to out + ".part", renamed to `out` only once it
// succeeded: `out` is either complete or absent. Throws
// scribe::Error("internal_error") with the tail of FFmpeg's stderr on failure;
// `timeout` bounds the whole call, fallback included.
void extract_audio(const std::string& in, const std::string& out, const std::string& ffmpeg = "ffmpeg",
                   std::chrono::seconds timeout = std::chrono::seconds(300));

}  // namespace scribe::media
