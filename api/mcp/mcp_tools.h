#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"

// The MCP tools (the spec's names): what each one is, its JSON Schemas and
// annotations, and how it runs, as one or more calls of the REST API made on
// the caller's behalf. A tool never has logic of its own beyond shaping
// arguments into requests and responses into a result, so every rule of the
// REST endpoint behind it (validation, money, idempotency, limits) holds.
namespace scribe::api::mcp {

// A REST request a tool makes, with the MCP caller's credentials.
struct RestCall {
  std::string method;  // GET, POST, DELETE
  std::string path;    // e.g. /api/v1/transcriptions/12/result (ids are digits; nothing to encode)
  std::vector<std::pair<std::string, std::string>> query;  // decoded names and values
  std::optional<Json> body;                                // sent as application/json
  std::optional<std::string> idempotency_key;
};

// What the REST API answered.
struct RestReply {
  int status = 0;
  std::string content_type;
  std::string body;  // raw
  Json json;         // parsed body when it is JSON, else null
};

// Runs a REST call and hands its reply to `then`: before execute returns for
// a synchronous route, later and from another thread for a long-poll (GET
// .../wait, a clip with `wait`). Nothing waits for a reply: what comes after
// a call is its continuation.
using Then = std::function<void(RestReply)>;
using Execute = std::function<void(const RestCall&, Then)>;

// What a running tool is given.
struct ToolCall {
  Execute execute;
  // Tells the caller how far a long wait has come (notifications/progress);
  // null when the caller did not ask to be told. Returns false once the
  // caller has gone away: the tool then finishes at once.
  std::function<bool(int64_t progress, int64_t total, const std::string& message)> progress;
  // The CallToolResult; called exactly once.
  std::function<void(Json result)> done;
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;  // states costs and consent where money moves
  Json input_schema;        // JSON Schema 2020-12, type object
  Json output_schema;       // type object
  bool read_only = true;    // listed and callable for read-only keys
  bool destructive = false;
  bool idempotent = false;
  bool open_world = false;
  // The tool waits in long-polls and reports progress between them
  // (waitForTranscription): asked with a progressToken, the MCP handler
  // answers with an event stream at once and sends the progress on it.
  bool reports_progress = false;
  // Runs the tool: shapes `arguments` into REST calls through `call.execute`
  // and their replies into a CallToolResult {content, structuredContent,
  // isError} handed to `call.done`. A REST error becomes isError: true
  // carrying the REST error code and message; bad arguments that the REST
  // API would not see (a missing id) too, and so does a reply that cannot be
  // read. Never throws for a tool-level failure.
  std::function<void(const Json& arguments, ToolCall call)> run;
};

const std::vector<Tool>& tools();
const Tool* find_tool(std::string_view name);

// The CallToolResult of a REST reply: 2xx gives structuredContent (the JSON
// body; a non-object or non-JSON body is wrapped as documented per tool) and
// one text block with the JSON; anything else gives isError: true with
// structuredContent {error: {code, message, ...}} (the envelope's error) and
// a text block "code: message".
Json result_of(const RestReply& reply);
Json error_result(const std::string& code, const std::string& message);
// The isError result for arguments the tool's inputSchema does not name (a
// misspelled max_charge_usd must not start a job with no ceiling), or that
// are not an object; nullopt when they are fine.
std::optional<Json> refuse_arguments(const Json& input_schema, const Json& arguments);

// The tools/list entry of a tool (name, title, description, inputSchema,
// outputSchema, annotations).
Json describe(const Tool& tool);

}  // namespace scribe::api::mcp
