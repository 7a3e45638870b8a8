#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"

// The HTTP request and response as the API layer sees them: plain values with
// no Beast types, so handlers compile fast and are easy to test.
namespace scribe::api {

// Where a streamed request body goes instead of a plain file, when a route
// reads its body as it arrives (a multipart form, parsed and hashed on the
// way to disk: api/openai/form_upload.h). The server calls write() with each
// piece in order, on its I/O thread, so it must be quick; false stops the
// read (the request then reaches the handler with body_state "interrupted").
class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual bool write(const char* data, std::size_t n) = 0;
};

struct Request {
  std::string method;
  std::string target;                                      // path and query as received
  std::string path;                                        // percent-decoded path
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  std::map<std::string, std::string> headers;              // lower-case names
  std::string body;
  std::string remote;
  // Streamed uploads (HttpServer::set_streaming): the body went to
  // `body_file` instead of `body`; `body_bytes` of it arrived, and
  // `body_state` says how the read ended: "complete", "interrupted" (the
  // body ended early: the client half-closed, reset or went quiet; the
  // response is still written, for a client that half-closed and reads it),
  // "too_large" or "failed" (the staging file could not be written).
  std::string body_file;
  int64_t body_bytes = 0;
  std::string body_state;
  // The StreamPlan's sink, when the body went to one instead of body_file.
  std::shared_ptr<BodySink> body_sink;

  std::optional<std::string> header(const std::string& lower_name) const;
  std::optional<std::string> query_param(std::string_view name) const;
};

// The body of a response that is written while it is produced (Server-Sent
// Events of an MCP tool call): the producer pushes pieces from any thread and
// closes it once; the server writes each piece as an HTTP/1.1 chunk as soon
// as the previous one is out. When the client goes away the server marks it
// gone, and a producer may stop early (pushes are then dropped).
class ChunkStream {
 public:
  void push(std::string piece);
  void close();
  bool gone() const;
  // Server side: `next` gets the next piece, or nullopt once closed and
  // drained; called once per pull, from the producer's or the caller's thread.
  void pull(std::function<void(std::optional<std::string>)> next);
  void mark_gone();

 private:
  mutable std::mutex mu_;
  std::deque<std::string> pieces_;
  bool closed_ = false;
  bool gone_ = false;
  std::function<void(std::optional<std::string>)> waiting_;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // A HEAD response: sent with the headers (Content-Length included) of the
  // body, but without the body.
  bool head = false;
  // Set: `body` is ignored and the body is this stream, sent chunked.
  std::shared_ptr<ChunkStream> stream;

  static Response json(int status, const Json& body);
  void set_header(const std::string& name, const std::string& value);
  std::optional<std::string> header(const std::string& name) const;
};

// Completes a request exactly once, from any thread.
using Responder = std::function<void(Response)>;

// What to do with a streamed body, decided from the request head before any
// of the body is read: refuse it (`reject`, after which the connection
// closes, since the unread body cannot be skipped cheaply), or write it to
// `file` (appending or from scratch), at most `max_bytes` of it.
struct StreamPlan {
  std::optional<Response> reject;
  std::string file;
  bool append = false;
  int64_t max_bytes = 0;
};

// An absolute-form request target (RFC 9112 §3.2.2), as a client talking to
// a proxy sends it: "http://host:port/path?query". `host` is lower-cased (an
// IPv6 literal keeps its brackets), `port` is the explicit port or the
// scheme's default, `origin_form` is the "/path?query" part. nullopt when the
// target is not of the form scheme "://" authority; `valid` is false when it
// is, but the scheme is not http(s) or the authority is malformed (userinfo,
// bad port, empty host).
struct AbsoluteTarget {
  bool valid = false;
  std::string scheme;
  std::string host;
  int port = 0;
  std::string authority;  // as received, for the Host header
  std::string origin_form;
};
std::optional<AbsoluteTarget> parse_absolute_target(const std::string& target);

// Splits a request target into a decoded path and query parameters.
// Returns false when the target is not valid percent-encoding.
bool parse_target(const std::string& target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query);

}  // namespace scribe::api
  // Set: the body is handed to this sink and `file` is not opened by the server.
  std::shared_ptr<BodySink> sink;
