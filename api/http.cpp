#include "api/http.h"

#include <strings.h>

namespace scribe::api {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out, bool plus_is_space) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

}  // namespace

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

bool parse_target(const std::string& target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
  query.clear();
  auto qpos = target.find('?');
  std::string_view raw_path = std::string_view(target).substr(0, qpos);
  if (!percent_decode(raw_path, path, false)) return false;
  if (qpos == std::string::npos) return true;
  std::string_view rest = std::string_view(target).substr(qpos + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string k, v;
    if (!percent_decode(pair.substr(0, eq), k, true)) return false;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), v, true)) return false;
    query.emplace_back(std::move(k), std::move(v));
  }
  return true;
}

}  // namespace scribe::api
