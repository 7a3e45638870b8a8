// Small helpers shared by the benchmarks in bench/ (header only: every
// bench/*_benchmark.cpp is its own executable).
#pragma once
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/db.h"
#include "common/json.h"
#include "eventstore/migrator.h"

namespace scribe::bench {

using Clock = std::chrono::steady_clock;

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

inline std::string require_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string(name) + " is not set");
  return v;
}

inline double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stod(v) : fallback;
}

// "a,b" -> {"a", "b"}
inline std::vector<std::string> env_list(const char* name, const std::string& fallback) {
  std::vector<std::string> out;
  std::stringstream ss(env_or(name, fallback));
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// "1,8,32" -> {1, 8, 32}
inline std::vector<int> env_int_list(const char* name, const std::string& fallback) {
  std::vector<int> out;
  for (const auto& item : env_list(name, fallback)) out.push_back(std::stoi(item));
  return out;
}

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Nearest-rank percentile of an already sorted sample, q in [0, 1].
inline double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  auto rank = static_cast<std::size_t>(q * static_cast<double>(sorted.size()));
  return sorted[std::min(rank, sorted.size() - 1)];
}

// Replaces the database name of a postgresql:// URL (the last path segment).
inline std::string with_database(const std::string& url, const std::string& dbname) {
  auto query = url.find('?');
  std::string base = url.substr(0, query);
  std::string rest = query == std::string::npos ? "" : url.substr(query);
  auto scheme = base.find("://");
  auto slash = base.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) return base + "/" + dbname + rest;
  return base.substr(0, slash + 1) + dbname + rest;
}

// Drops and re-creates database `dbname` on the server of `base_url` and
// migrates it: each benchmark measures in a database of its own. Returns the
// new database's URL.
inline std::string fresh_database(const std::string& base_url, const std::string& dbname) {
  {
    auto admin = db::open_connection(base_url, false);
    pqxx::nontransaction txn(*admin);
    txn.exec("drop database if exists " + txn.quote_name(dbname) + " with (force)");
    txn.exec("create database " + txn.quote_name(dbname));
  }
  const std::string url = with_database(base_url, dbname);
  auto conn = db::open_connection(url, false);
  eventstore::migrate(*conn);
  return url;
}

// What the run ran on, so that a figure can be reproduced on a machine of
// the same kind (issue 23): CPU model, cores, load average at the start and
// kernel. Prints one human line and one JSON line {"bench":"machine",...} and
// returns the same fields. Every benchmark's output starts with it; bench/
// bench_lib.sh's machine_line prints the same two lines for the scripts.
inline Json machine_info(std::ostream& out = std::cout) {
  std::string model = "unknown";
  {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string l; std::getline(cpuinfo, l);)
      if (l.rfind("model name", 0) == 0 && l.find(':') != std::string::npos) {
        model = l.substr(l.find(':') + 1);
        model.erase(0, model.find_first_not_of(" \t"));
        break;
      }
  }
  double load[3] = {0, 0, 0};
  {
    std::ifstream loadavg("/proc/loadavg");
    loadavg >> load[0] >> load[1] >> load[2];
  }
  utsname u{};
  ::uname(&u);
  const std::string kernel = std::string(u.sysname) + " " + u.release;
  const unsigned cores = std::thread::hardware_concurrency();
  std::ostringstream loads;
  loads << load[0] << " " << load[1] << " " << load[2];
  out << "machine: " << model << ", " << cores << " cores, load average " << loads.str() << ", " << kernel << "\n";
  Json j{{"bench", "machine"},
         {"cpu_model", model},
         {"cores", cores},
         {"load_average", {load[0], load[1], load[2]}},
         {"kernel", kernel}};
  out << j.dump() << "\n" << std::flush;
  return j;
}

inline double seconds_of(const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; }
inline double cpu_seconds_of(const rusage& r) { return seconds_of(r.ru_utime) + seconds_of(r.ru_stime); }

// CPU seconds (user + system) of this process so far, all threads.
inline double process_cpu_seconds() {
  rusage r{};
  ::getrusage(RUSAGE_SELF, &r);
  return cpu_seconds_of(r);
}

// CPU seconds of this process's waited-for children so far (what a part
// spends in helpers it spawns, such as ffprobe, counts as its own).
inline double children_cpu_seconds() {
  rusage r{};
  ::getrusage(RUSAGE_CHILDREN, &r);
  return cpu_seconds_of(r);
}

// A child process's cost, from wait4's rusage.
struct ChildRun {
  int status = -1;  // exit code, or -1 when it did not exit normally
  double cpu_seconds = 0, wall_seconds = 0;
  double max_rss_mib = 0;
};

// Runs argv[0] (looked up in PATH) with stdin from /dev/null, stdout to
// `stdout_path` and stderr to `stderr_path`, and waits for it.
inline ChildRun run_child(const std::vector<std::string>& argv, const std::string& stdout_path = "/dev/null",
                          const std::string& stderr_path = "/dev/null") {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int o = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || o < 0 || e < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  ChildRun r;
  r.wall_seconds = seconds_since(t0);
  r.cpu_seconds = cpu_seconds_of(usage);
  r.max_rss_mib = double(usage.ru_maxrss) / 1024.0;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace scribe::bench
