#include "media/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/text.h"

extern char** environ;

namespace scribe::media {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_of(const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; }

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const ProcessLimits& limits) {
  ProcessResult r;
  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0) {
    r.spawn_errno = errno;
    return r;
  }
  if (pipe2(errp, O_CLOEXEC) != 0) {
    r.spawn_errno = errno;
    close(outp[0]);
    close(outp[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The server blocks or handles these signals; the tool must not inherit that
  // (a blocked SIGTERM would survive a shutdown, an ignored SIGPIPE would keep
  // a tool writing into a closed pipe).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(outp[1]);
  close(errp[1]);
  if (rc != 0) {
    r.spawn_errno = rc;
    close(outp[0]);
    close(errp[0]);
    return r;
  }
  r.started = true;
  // posix_spawn has no attribute for resource limits, and setting one in this
  // process would bind every thread of the server. Set right after the exec,
  // the limit is in place before the tool opens its inputs and grows.
  if (limits.max_address_space > 0) {
    const rlimit limit{limits.max_address_space, limits.max_address_space};
    prlimit(pid, RLIMIT_AS, &limit, nullptr);
  }

  const auto deadline = Clock::now() + timeout;
  auto kill_group = [pid] {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);  // in case it left its group
  };
  pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      kill_group();
      break;
    }
    if (limits.cancel && limits.cancel->load()) {
      r.cancelled = true;
      kill_group();
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (i == 0) {
        if (r.out.size() + static_cast<std::size_t>(got) > limits.max_stdout) {
          r.output_overflow = true;
          kill_group();
        } else {
          r.out.append(buf, static_cast<std::size_t>(got));
        }
      } else {
        r.err.append(buf, static_cast<std::size_t>(got));
        if (r.err.size() > limits.max_stderr) r.err.erase(0, r.err.size() - limits.max_stderr);
      }
    }
    if (r.output_overflow) break;
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  // Polled rather than a blocking wait: a child that closed its pipes but
  // lingers past the deadline is still killed.
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t w = wait4(pid, &status, WNOHANG, &usage);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline && !r.timed_out) {
      r.timed_out = true;
      kill_group();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  r.cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  r.peak_rss_mib = double(usage.ru_maxrss) / 1024.0;  // Linux counts ru_maxrss in KiB
  return r;
}

std::string stderr_tail(const std::string& err, std::size_t max_chars) {
  std::string t(trim(err));
  if (t.size() > max_chars) t = "..." + t.substr(t.size() - max_chars);
  for (char& c : t)
    if (c == '\n' || c == '\r') c = ' ';
  return t;
}

std::string describe_failure(const std::string& tool, const ProcessResult& r, std::chrono::milliseconds timeout) {
  if (!r.started) return "cannot run " + tool + ": " + std::strerror(r.spawn_errno);
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", double(timeout.count()) / 1000.0);
  const std::string what = r.timed_out          ? tool + " timed out after " + limit + " s"
                           : r.cancelled        ? tool + " was stopped"
                           : r.output_overflow  ? tool + " wrote more output than expected"
                           : r.term_signal != 0 ? tool + " was killed by signal " + std::to_string(r.term_signal)
                                                : tool + " exited with status " + std::to_string(r.exit_code);
  const std::string t = stderr_tail(r.err);
  return t.empty() ? what : what + ": " + t;
}

}  // namespace scribe::media
