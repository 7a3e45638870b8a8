#pragma once
#include <atomic>
#include <chrono>
#include <string>

#include "domain/media_playback.h"

// What a job keeps of an uploaded or fetched source besides the transcript:
// whether it has a picture worth a video clip, and its audio alone, so that
// audio clips and audiograms need not keep (or read through) the whole video.
namespace scribe::media {

// The container, streams and duration of `path` (ffprobe), as
// playback::decide reads them. Throws scribe::Error("internal_error") when
// ffprobe cannot run, times out or cannot read the file.
playback::Probe probe_streams(const std::string& path, const std::string& ffprobe = "ffprobe",
                              std::chrono::seconds timeout = std::chrono::seconds(30));

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

// Writes a browser-playable rendition of `in` to `out`
// (playback::rendition_content_type): for Kind::Audio the first audio stream
// as AAC 128 kb/s in an M4A; for Kind::Video the first video stream as
// H.264 (x264 `veryfast`, CRF 23, 4:2:0, at most 1280 px wide, even sizes)
// with its first audio stream, if any, as AAC, in an MP4. Both put the index
// first (+faststart) so a player starts and seeks without reading the whole
// file. Written to out + ".part" and renamed: `out` is complete or absent.
// Throws scribe::Error("internal_error") on failure; a set `cancel` stops
// FFmpeg (the result is then an error too).
void make_rendition(const std::string& in, const std::string& out, playback::Kind kind, int threads = 0,
                    const std::atomic<bool>* cancel = nullptr, const std::string& ffmpeg = "ffmpeg",
                    std::chrono::seconds timeout = std::chrono::seconds(3600));

}  // namespace scribe::media
