#include "api/http.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <utility>

#include "common/text.h"

namespace scribe::api {

std::optional<std::string> Request::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Request::query_param(std::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return v;
  return std::nullopt;
}

void ChunkStream::push(std::string piece) {
  std::function<void(std::optional<std::string>)> deliver;
  {
    std::lock_guard lock(mu_);
    if (closed_ || gone_) return;
    if (waiting_) deliver = std::exchange(waiting_, nullptr);
    else pieces_.push_back(std::move(piece));
  }
  if (deliver) deliver(std::move(piece));
}

void ChunkStream::close() {
  std::function<void(std::optional<std::string>)> deliver;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    if (waiting_ && pieces_.empty()) deliver = std::exchange(waiting_, nullptr);
  }
  if (deliver) deliver(std::nullopt);
}

bool ChunkStream::gone() const {
  std::lock_guard lock(mu_);
  return gone_;
}

void ChunkStream::mark_gone() {
  std::lock_guard lock(mu_);
  gone_ = true;
  pieces_.clear();
  waiting_ = nullptr;
}

void ChunkStream::pull(std::function<void(std::optional<std::string>)> next) {
  std::optional<std::string> piece;
  bool end = false;
  {
    std::lock_guard lock(mu_);
    if (!pieces_.empty()) {
      piece = std::move(pieces_.front());
      pieces_.pop_front();
    } else if (closed_) {
      end = true;
    } else {
      waiting_ = std::move(next);
      return;
    }
  }
  next(end ? std::nullopt : std::move(piece));
}

std::shared_ptr<FileBody> FileBody::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return nullptr;
  }
  return std::shared_ptr<FileBody>(new FileBody(fd, static_cast<uint64_t>(st.st_size)));
}

FileBody::~FileBody() { ::close(fd_); }

void FileBody::select(uint64_t offset, uint64_t length) {
  offset_ = std::min(offset, file_size_);
  length_ = std::min(length, file_size_ - offset_);
}

long FileBody::read(uint64_t at, char* buf, std::size_t n) const {
  if (at >= length_) return 0;
  n = static_cast<std::size_t>(std::min<uint64_t>(n, length_ - at));
  for (;;) {
    const ssize_t got = ::pread(fd_, buf, n, static_cast<off_t>(offset_ + at));
    if (got < 0 && errno == EINTR) continue;
    return static_cast<long>(got);
  }
}

Response Response::json(int status, const Json& body) {
  Response r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

void Response::set_header(const std::string& name, const std::string& value) {
  for (auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) {
      v = value;
      return;
    }
  headers.emplace_back(name, value);
}

std::optional<std::string> Response::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return std::nullopt;
}

std::optional<AbsoluteTarget> parse_absolute_target(const std::string& target) {
  if (target.empty() || target.front() == '/') return std::nullopt;
  auto sep = target.find("://");
  if (sep == std::string::npos || sep == 0) return std::nullopt;
  for (std::size_t i = 0; i < sep; ++i) {
    unsigned char c = static_cast<unsigned char>(target[i]);
    if (!(std::isalpha(c) || (i > 0 && (std::isdigit(c) || c == '+' || c == '-' || c == '.')))) return std::nullopt;
  }
  AbsoluteTarget t;
  t.scheme = to_lower(std::string_view(target).substr(0, sep));
  auto start = sep + 3;
  auto end = target.find_first_of("/?#", start);
  if (end == std::string::npos) end = target.size();
  t.authority = target.substr(start, end - start);
  // "http://host" and "http://host?q" mean the path "/".
  if (end == target.size() || target[end] != '/') t.origin_form.push_back('/');
  t.origin_form.append(target, end, std::string::npos);
  if (t.scheme != "http" && t.scheme != "https") return t;
  // Userinfo in an http(s) URI is to be treated as an error (RFC 9110 §4.2.4).
  if (t.authority.empty() || t.authority.find('@') != std::string::npos) return t;
  std::string_view a = t.authority;
  std::string_view host, port;
  if (a.front() == '[') {
    auto close = a.find(']');
    if (close == std::string_view::npos) return t;
    host = a.substr(0, close + 1);
    if (close + 1 < a.size()) {
      if (a[close + 1] != ':') return t;
      port = a.substr(close + 2);
    }
  } else {
    auto colon = a.find(':');
    host = a.substr(0, colon);
    if (colon != std::string_view::npos) port = a.substr(colon + 1);
  }
  if (host.empty()) return t;
  t.host = to_lower(host);
  t.port = t.scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5) return t;
    int p = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return t;
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return t;
    t.port = p;
  }
  t.valid = true;
  return t;
}

bool parse_urlencoded(std::string_view text, std::vector<std::pair<std::string, std::string>>& out) {
  out.clear();
  std::string_view rest = text;
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    constexpr PercentDecoding kForm{.plus_is_space = true};
    std::string k, v;
    if (!percent_decode(pair.substr(0, eq), k, kForm)) return false;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), v, kForm)) return false;
    out.emplace_back(std::move(k), std::move(v));
  }
  return true;
}

bool parse_target(const std::string& target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
  query.clear();
  auto qpos = target.find('?');
  // The path keeps '+' as it is; in the query it means a space (HTML forms).
  // A bad path leaves its decoded start in `path`, which decides whether the
  // 400 is an /api/v1 response (with CORS headers).
  if (!percent_decode(std::string_view(target).substr(0, qpos), path)) return false;
  if (qpos == std::string::npos) return true;
  return parse_urlencoded(std::string_view(target).substr(qpos + 1), query);
}

}  // namespace scribe::api
