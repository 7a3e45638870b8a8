#include "api/mcp/mcp_protocol.h"

#include <algorithm>
#include <set>

#include "domain/upload.h"

namespace scribe::api::mcp {
namespace {

// What this server serves, per revision, capability by capability: the value
// it declares (server/discover, initialize) and the requests the capability
// brings. Declared and served come from this one table, so they cannot
// disagree. 2026-07-28 removed resource subscriptions and logging/setLevel;
// nothing is ever pushed (a completed transcript never changes, the tools
// are fixed), so no listChanged.
struct Capability {
  std::string name;
  Json declared;
  std::vector<std::string> methods;
};

const std::vector<Capability>& capabilities(Era era) {
  static const std::vector<Capability> modern = {
      {"tools", Json::object(), {"tools/list", "tools/call"}},
      {"resources", Json::object(), {"resources/list", "resources/templates/list", "resources/read"}},
      {"prompts", Json::object(), {"prompts/list", "prompts/get"}},
  };
  static const std::vector<Capability> legacy = {
      {"tools", {{"listChanged", false}}, {"tools/list", "tools/call"}},
      {"resources",
       {{"subscribe", true}, {"listChanged", false}},
       {"resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
        "resources/unsubscribe"}},
      {"prompts", {{"listChanged", false}}, {"prompts/list", "prompts/get"}},
      {"logging", Json::object(), {"logging/setLevel"}},
  };
  return era == Era::Modern ? modern : legacy;
}

// What a client may send whatever the capabilities: the lifecycle and the
// notifications (the two schema.ts ClientRequest and ClientNotification
// lists, less what needs a capability this server does not declare, such as
// completion/complete).
const std::set<std::string, std::less<>> kModernBase = {"server/discover", "notifications/cancelled"};
const std::set<std::string, std::less<>> kLegacyBase = {"initialize",
                                                        "ping",
                                                        "notifications/initialized",
                                                        "notifications/cancelled",
                                                        "notifications/progress",
                                                        "notifications/roots/list_changed"};

std::optional<std::string> header(const std::map<std::string, std::string>& headers, const std::string& name) {
  auto it = headers.find(name);
  if (it == headers.end()) return std::nullopt;
  return decode_header_value(it->second);
}

Failure fail(int status, const Json& id, int code, std::string message, Json data = nullptr) {
  return Failure{status, id, code, std::move(message), std::move(data)};
}

// The name the Mcp-Name header must carry for `method`, if any.
std::optional<std::string> routed_name(const std::string& method, const Json& params) {
  const char* key = method == "tools/call" || method == "prompts/get" ? "name"
                    : method == "resources/read"                      ? "uri"
                                                                      : nullptr;
  if (!key) return std::nullopt;
  if (!params.contains(key) || !params[key].is_string()) return std::string();
  return params[key].get<std::string>();
}

}  // namespace

const std::vector<std::string>& legacy_versions() {
  static const std::vector<std::string> v = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return v;
}

std::string decode_header_value(const std::string& value) {
  static const std::string kOpen = "=?base64?", kClose = "?=";
  if (value.size() >= kOpen.size() + kClose.size() && value.compare(0, kOpen.size(), kOpen) == 0 &&
      value.compare(value.size() - kClose.size(), kClose.size(), kClose) == 0) {
    auto decoded = upload::base64_decode(
        std::string_view(value).substr(kOpen.size(), value.size() - kOpen.size() - kClose.size()));
    if (decoded) return *decoded;
  }
  return value;
}

bool has_method(Era era, std::string_view method) {
  if ((era == Era::Modern ? kModernBase : kLegacyBase).count(method)) return true;
  for (const auto& c : capabilities(era))
    if (std::find(c.methods.begin(), c.methods.end(), method) != c.methods.end()) return true;
  return false;
}

Json server_capabilities(Era era) {
  Json out = Json::object();
  for (const auto& c : capabilities(era)) out[c.name] = c.declared;
  return out;
}

std::variant<Message, Failure> classify(const std::map<std::string, std::string>& headers, const std::string& body) {
  Json msg;
  try {
    msg = Json::parse(body);
  } catch (const std::exception&) {
    return fail(400, nullptr, kParseError, "Parse error: the body is not JSON");
  }
  if (msg.is_array())
    return fail(400, nullptr, kInvalidRequest, "Invalid Request: batches are not supported; send one message per POST");
  if (!msg.is_object()) return fail(400, nullptr, kInvalidRequest, "Invalid Request: the body must be a JSON object");

  Json id = nullptr;
  if (msg.contains("id")) {
    if (!msg["id"].is_string() && !msg["id"].is_number_integer())
      return fail(400, nullptr, kInvalidRequest, "Invalid Request: id must be a string or an integer");
    id = msg["id"];
  }
  if (msg.value("jsonrpc", "") != "2.0")
    return fail(400, id, kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");

  Message m;
  m.id = id;
  if (!msg.contains("method")) {
    // A response to a server request: this server sends none, so there is
    // nothing to match it to; acknowledged like a notification.
    if (!id.is_null() && (msg.contains("result") || msg.contains("error"))) {
      m.response = true;
      return m;
    }
    return fail(400, id, kInvalidRequest, "Invalid Request: method is missing");
  }
  if (!msg["method"].is_string()) return fail(400, id, kInvalidRequest, "Invalid Request: method must be a string");
  m.method = msg["method"].get<std::string>();
  m.notification = id.is_null();
  if (msg.contains("params")) {
    if (!msg["params"].is_object()) return fail(400, id, kInvalidParams, "Invalid params: params must be an object");
    m.params = msg["params"];
  }

  const auto header_version = header(headers, "mcp-protocol-version");
  const Json* meta = m.params.contains("_meta") ? &m.params["_meta"] : nullptr;
  if (meta && !meta->is_object()) return fail(400, id, kInvalidParams, "Invalid params: _meta must be an object");
  const bool claims = meta && meta->contains(kMetaVersion);

  if (!claims) {
    if (header_version && *header_version == kModernVersion)
      return fail(400, id, kInvalidParams,
                  std::string("Invalid params: a 2026-07-28 request must carry params._meta[\"") + kMetaVersion +
                      "\"] and params._meta[\"" + kMetaCapabilities + "\"]");
    m.era = Era::Legacy;
    if (header_version && m.method != "initialize") {
      const auto& ok = legacy_versions();
      if (std::find(ok.begin(), ok.end(), *header_version) == ok.end())
        return fail(400, id, kInvalidRequest, "Unsupported MCP-Protocol-Version: " + *header_version);
    }
    m.version = header_version.value_or(std::string(kLegacyVersion));
    return m;
  }

  // 2026-07-28: the body says which revision; the headers must agree.
  m.era = Era::Modern;
  const Json& claimed = (*meta)[kMetaVersion];
  if (!claimed.is_string())
    return fail(400, id, kInvalidParams,
                std::string("Invalid params: _meta[\"") + kMetaVersion + "\"] must be a string");
  m.version = claimed.get<std::string>();
  if (!header_version)
    return fail(400, id, kHeaderMismatch, "Header mismatch: the MCP-Protocol-Version header is missing");
  if (*header_version != m.version)
    return fail(400, id, kHeaderMismatch,
                "Header mismatch: MCP-Protocol-Version is " + *header_version + " but the body says " + m.version);
  if (m.version != kModernVersion)
    return fail(400, id, kUnsupportedVersion, "Unsupported protocol version",
                {{"supported", Json::array({std::string(kModernVersion)})}, {"requested", m.version}});
  const auto method_header = header(headers, "mcp-method");
  if (!method_header) return fail(400, id, kHeaderMismatch, "Header mismatch: the Mcp-Method header is missing");
  if (*method_header != m.method)
    return fail(400, id, kHeaderMismatch,
                "Header mismatch: Mcp-Method is " + *method_header + " but the body's method is " + m.method);
  if (!m.notification && (!meta->contains(kMetaCapabilities) || !(*meta)[kMetaCapabilities].is_object()))
    return fail(400, id, kInvalidParams,
                std::string("Invalid params: _meta[\"") + kMetaCapabilities + "\"] is required (an object)");
  if (auto name = routed_name(m.method, m.params)) {
    const auto name_header = header(headers, "mcp-name");
    if (!name_header) return fail(400, id, kHeaderMismatch, "Header mismatch: the Mcp-Name header is missing");
    if (*name_header != *name)
      return fail(400, id, kHeaderMismatch,
                  "Header mismatch: Mcp-Name is " + *name_header + " but the body names " + *name);
  }
  if (!m.notification && !has_method(Era::Modern, m.method))
    return fail(404, id, kMethodNotFound, "Method not found: " + m.method + " (not a 2026-07-28 method)");
  return m;
}

Json error_body(const Failure& f) {
  Json e = {{"code", f.code}, {"message", f.message}};
  if (!f.data.is_null()) e["data"] = f.data;
  return {{"jsonrpc", "2.0"}, {"id", f.id}, {"error", e}};
}

Json result_body(const Json& id, Json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

}  // namespace scribe::api::mcp
