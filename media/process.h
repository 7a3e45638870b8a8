#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// The one way media/ runs its helper programs (ffprobe, ffmpeg, yt-dlp): no
// shell, so that a file name or URL is never read as shell syntax; stdin from
// /dev/null, so that a tool waiting for input cannot hang a job; a process
// group of its own, so that the deadline also ends what the tool started.
namespace scribe::media {

struct ProcessLimits {
  // Past this much stdout the process is killed (output_overflow): every caller
  // parses stdout whole, and a truncated JSON document is worth nothing.
  std::size_t max_stdout = 64u << 20;
  // Only the tail of stderr is kept: the last lines say why a tool failed.
  std::size_t max_stderr = 64u << 10;
  // The child's address space (RLIMIT_AS) in bytes; 0: no limit. A filter
  // gone wrong then fails the one run instead of drawing the host into the
  // OOM killer.
  uint64_t max_address_space = 0;
  // Set (by another thread) to stop the run: its process group is killed
  // within a second and the result says `cancelled`. A worker passes its
  // lease's flag, so a lost lease or a shutdown does not wait for a render.
  const std::atomic<bool>* cancel = nullptr;
};

struct ProcessResult {
  bool started = false;
  int spawn_errno = 0;  // why it did not start
  bool timed_out = false;
  bool output_overflow = false;
  bool cancelled = false;
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  std::string out;
  std::string err;  // the last max_stderr bytes
  // The child's own cost, from wait4(): CPU (user + system) and peak resident set.
  double cpu_seconds = 0;
  double peak_rss_mib = 0;

  bool ok() const { return started && !timed_out && !output_overflow && !cancelled && exit_code == 0; }
};

// Runs argv[0] (looked up on PATH) with argv as its arguments and waits for
// it, killing its process group at the deadline or on too much output.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const ProcessLimits& limits = {});

// The last `max_chars` characters of a tool's stderr, trimmed, on one line:
// fit for an error message.
std::string stderr_tail(const std::string& err, std::size_t max_chars = 1500);

// Why a run failed, for an error message: "cannot run <tool>: ...",
// "<tool> timed out after N s", "<tool> exited with status N: <stderr tail>"...
std::string describe_failure(const std::string& tool, const ProcessResult& r, std::chrono::milliseconds timeout);

}  // namespace scribe::media
