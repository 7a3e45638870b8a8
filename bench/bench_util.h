// Small helpers shared by the benchmarks in bench/ (header only: every
// bench/*_benchmark.cpp is its own executable).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/db.h"
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
  migrator::migrate(*conn);
  return url;
}

}  // namespace scribe::bench
