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

struct WebSocketAccept;  // api/websocket.h

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
  // A valid WebSocket opening handshake (GET, Upgrade: websocket, Connection:
  // upgrade, a Sec-WebSocket-Key, version 13; a malformed one never reaches
  // dispatch: 400, or 426 for another version). The route answers with
  // Response::websocket set to accept, or with any other response to refuse
  // (written as HTTP; the connection then closes).
  bool websocket_upgrade = false;

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

// The body of a response read from a file while it is sent (a clip file):
// bytes [offset, offset + length) of it, read 64 KiB at a time as the socket
// drains, so a download holds one buffer and never the file. The file is
// open from open() until the last copy goes (the server drops its copy once
// the body is sent or the connection is gone), and so is `hold`, which a
// handler sets to what the download occupies (a slot of a bounded count).
class FileBody {
 public:
  // `path` opened for reading, the whole file selected; nullptr when it
  // cannot be opened.
  static std::shared_ptr<FileBody> open(const std::string& path);
  ~FileBody();
  FileBody(const FileBody&) = delete;
  FileBody& operator=(const FileBody&) = delete;

  uint64_t file_size() const { return file_size_; }
  // Sends `length` bytes from `offset` instead (within the file).
  void select(uint64_t offset, uint64_t length);
  uint64_t offset() const { return offset_; }
  uint64_t length() const { return length_; }
  // Reads up to `n` bytes at `at` within the selection: how many were read,
  // 0 past the end of the file (it shrank), -1 on an error (errno says which).
  long read(uint64_t at, char* buf, std::size_t n) const;

  std::shared_ptr<void> hold;

 private:
  FileBody(int fd, uint64_t size) : fd_(fd), file_size_(size), length_(size) {}
  int fd_;
  uint64_t file_size_;
  uint64_t offset_ = 0;
  uint64_t length_;
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
  // Set: `body` is ignored and the body is this part of a file, sent with
  // its Content-Length (a HEAD answer sends that length, without the body).
  std::shared_ptr<FileBody> file;
  // Set (only in answer to Request::websocket_upgrade): the connection
  // becomes a WebSocket (api/websocket.h); status and body are ignored.
  std::shared_ptr<WebSocketAccept> websocket;

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
  // Set: the body is handed to this sink and `file` is not opened by the server.
  std::shared_ptr<BodySink> sink;
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

// An application/x-www-form-urlencoded text (a query string, an HTML form's
// body) into its pairs, in order, '+' as a space; false on a malformed escape.
bool parse_urlencoded(std::string_view text, std::vector<std::pair<std::string, std::string>>& out);
// Splits a request target into a decoded path and query parameters.
// Returns false when the target is not valid percent-encoding.
bool parse_target(const std::string& target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query);

}  // namespace scribe::api
