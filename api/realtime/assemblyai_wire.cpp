#include "api/realtime/assemblyai_wire.h"

namespace scribe::api::realtime {

bool is_assemblyai_path(const std::string& path) { return path.rfind("/v3/", 0) == 0 || path.rfind("//v3/", 0) == 0; }

void normalize_credential(Request& req) {
  auto it = req.headers.find("authorization");
  if (it == req.headers.end() || it->second.empty()) return;
  if (it->second.find(' ') == std::string::npos) it->second = "Bearer " + it->second;
}

void decorate_error(Response& res) {
  if (res.status < 400 || res.stream || res.file) return;
  Json body = Json::parse(res.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("error") || !body["error"].is_object()) return;
  const Json& e = body["error"];
  res.set_header("X-Error-Code", e.value("code", ""));
  res.body = Json{{"error", e.value("message", e.value("code", "error"))}}.dump();
}

}  // namespace scribe::api::realtime
