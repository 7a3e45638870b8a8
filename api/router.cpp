#include "api/router.h"

#include <algorithm>

#include "api/services.h"
#include "common/error.h"

namespace scribe::api {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 1;
  if (path.empty() || path[0] != '/') return out;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

}  // namespace

pqxx::connection& RequestContext::db() {
  if (!lease_) lease_.emplace(services.pool.acquire());
  return **lease_;
}

int64_t RequestContext::id_param(const std::string& name, const std::string& what) const {
  auto it = params.find(name);
  if (it == params.end() || it->second.empty() || it->second.size() > 18) throw Error::not_found(what);
  int64_t v = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') throw Error::not_found(what);
    v = v * 10 + (c - '0');
  }
  if (v < 1) throw Error::not_found(what);
  return v;
}

void Router::add(Route route) {
  route.segments = split_path(route.pattern);
  routes_.push_back(std::move(route));
}

Router::Match Router::match(const std::string& method, const std::string& path) const {
  Match m;
  auto parts = split_path(path);
  for (const auto& r : routes_) {
    if (r.segments.size() != parts.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (std::size_t i = 0; i < parts.size() && ok; ++i) {
      const auto& seg = r.segments[i];
      if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
        if (parts[i].empty()) ok = false;
        else params[seg.substr(1, seg.size() - 2)] = parts[i];
      } else if (seg != parts[i]) {
        ok = false;
      }
    }
    if (!ok) continue;
    if (r.method == method || (method == "HEAD" && r.method == "GET")) {
      if (!m.route) {
        m.route = &r;
        m.params = std::move(params);
      }
    } else if (std::find(m.allowed_methods.begin(), m.allowed_methods.end(), r.method) == m.allowed_methods.end()) {
      // Two patterns can match one path (.../clips/quote and .../clips/{clipId}).
      m.allowed_methods.push_back(r.method);
    }
  }
  return m;
}

}  // namespace scribe::api
