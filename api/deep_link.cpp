#include "api/deep_link.h"

namespace scribe::api {
namespace {

// Adds `t=<seconds>` to the query of `url`, dropping any `t` parameter it
// had (a shared link often carries the moment it was shared at), and keeps
// the fragment after the query where it belongs.
std::string with_time_parameter(const std::string& url, int64_t seconds) {
  const auto hash = url.find('#');
  const std::string fragment = hash == std::string::npos ? "" : url.substr(hash);
  std::string head = url.substr(0, hash);
  const auto question = head.find('?');
  std::string base = head.substr(0, question);
  std::string kept;
  if (question != std::string::npos) {
    const std::string query = head.substr(question + 1);
    std::size_t start = 0;
    while (start <= query.size()) {
      auto amp = query.find('&', start);
      if (amp == std::string::npos) amp = query.size();
      const std::string item = query.substr(start, amp - start);
      start = amp + 1;
      if (item.empty() || item == "t" || item.rfind("t=", 0) == 0) continue;
      kept += (kept.empty() ? "" : "&") + item;
    }
  }
  const std::string t = "t=" + std::to_string(seconds);
  return base + "?" + (kept.empty() ? t : kept + "&" + t) + fragment;
}

}  // namespace

std::string deep_link(const std::string& public_url, int64_t transcription_id, const std::string& source,
                      const std::optional<std::string>& url, int64_t start_ms) {
  const int64_t seconds = start_ms > 0 ? start_ms / 1000 : 0;
  if (url && !url->empty()) {
    if (source == "video_site" || source == "platform_url") return with_time_parameter(*url, seconds);
    if (source == "external_url") return url->substr(0, url->find('#')) + "#t=" + std::to_string(seconds);
  }
  std::string base = public_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/app/transcriptions/" + std::to_string(transcription_id) + "?t=" + std::to_string(seconds);
}

}  // namespace scribe::api
