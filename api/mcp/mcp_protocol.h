#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json.h"

// The MCP Streamable HTTP rules (docs/mcp_protocol_notes.md) that decide how
// a POST to /mcp is read, before any tool runs: which protocol revision it
// speaks, whether its headers agree with its body, and which methods that
// revision has. Pure: the handler (api/handlers/mcp_handlers.cpp) does the
// sessions, the tools and the writing.
//
// Two revisions share the endpoint. A request whose params._meta carries
// "io.modelcontextprotocol/protocolVersion" is 2026-07-28 ("modern":
// stateless, every request self-describing, headers checked against the
// body); anything else is 2025-11-25 ("legacy": initialize, then a session).
// This is the official SDKs' body-first rule, so both their clients work.
namespace scribe::api::mcp {

inline constexpr std::string_view kModernVersion = "2026-07-28";
inline constexpr std::string_view kLegacyVersion = "2025-11-25";
// Versions a legacy client may have negotiated (the MCP-Protocol-Version
// header after initialize); initialize answers kLegacyVersion to any other.
const std::vector<std::string>& legacy_versions();

inline constexpr const char* kMetaVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

// JSON-RPC and MCP error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kUnsupportedVersion = -32022;
// Transport-level refusals of the reference server (no session, bad method).
inline constexpr int kServerError = -32000;

enum class Era { Modern, Legacy };

// A refusal: the HTTP status and the JSON-RPC error, with the request's id
// when it could be read (null otherwise).
struct Failure {
  int http_status = 400;
  Json id;
  int code = kInvalidRequest;
  std::string message;
  Json data;  // null: none
};

struct Message {
  Era era = Era::Legacy;
  Json id;  // null for a notification
  bool notification = false;
  bool response = false;  // a JSON-RPC response posted by a legacy client (acknowledged, ignored)
  std::string method;
  Json params = Json::object();
  std::string version;  // the revision the message speaks (legacy: header value or kLegacyVersion)
};

// Reads one POSTed message. `headers` has lower-case names.
std::variant<Message, Failure> classify(const std::map<std::string, std::string>& headers, const std::string& body);

// Whether this server serves the method in that revision (requests and
// notifications a client sends): the lifecycle, and the requests of the
// capabilities it declares. A method of no declared capability (e.g.
// completion/complete) is "method not found".
bool has_method(Era era, std::string_view method);
// The capabilities server/discover (2026-07-28) and initialize (2025-11-25)
// declare: exactly those whose methods are served.
Json server_capabilities(Era era);

// The JSON-RPC bodies.
Json error_body(const Failure& f);
Json result_body(const Json& id, Json result);

// Header values that are not plain visible ASCII are sent as
// "=?base64?<base64 of UTF-8>?=" (2026-07-28); returns the decoded value.
std::string decode_header_value(const std::string& value);

}  // namespace scribe::api::mcp
