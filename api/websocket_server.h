#pragma once
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/http.h"
#include "api/websocket.h"
#include "common/error.h"

// The server side of api/websocket.h, for api/http_server.cpp only (it
// carries Beast types): the handshake check of a parsed request, and the
// connections a server has upgraded.
namespace scribe::api {

// What a request head asks for: `upgrade` when it is a WebSocket opening
// handshake (GET with an Upgrade header naming websocket); `error` when it is
// one but malformed (400, or 426 naming version 13 for another version). A
// GET without "websocket" in Upgrade, or any other method, is plain HTTP.
struct HandshakeCheck {
  bool upgrade = false;
  std::optional<Error> error;
};
HandshakeCheck check_handshake(const Request& head, unsigned http_version);

class WebSocketSession;

// The WebSocket connections of one HttpServer. Declared after the
// io_context in the server, so that it goes first.
class WebSocketHub {
 public:
  // `ended` runs (on any thread, no lock held) each time a connection ends,
  // so a shutdown waiting for open() to reach 0 can look again.
  explicit WebSocketHub(std::function<void()> ended) : ended_(std::move(ended)) {}

  // Takes over the connection of an upgrade request a route accepted:
  // writes the 101 (with `headers`) and serves it. On the connection's strand.
  // `early`: bytes the client sent after the request without waiting for
  // the 101 (RFC 6455 says it waits; some clients do not): its first frames.
  void start(boost::beast::tcp_stream stream, boost::beast::http::request<boost::beast::http::string_body> req,
             std::shared_ptr<WebSocketAccept> accept, std::vector<std::pair<std::string, std::string>> headers,
             std::string remote, std::string early);
  // Connections started and not yet ended (also those still in the handshake).
  int open() const { return open_.load(); }
  // Shutdown: each open connection (and each one opened after this) gets its
  // handler's on_shutdown, then a close ws_close::kGoingAway.
  void going_away();
  bool is_going_away() const { return going_away_.load(); }
  // After the io_context has stopped and its threads have joined: ends every
  // connection left (on_closed with the code it sent, or kAbnormal), so no
  // application object keeps a connection, or its socket, alive.
  void abandon();

  void remove(const std::shared_ptr<WebSocketSession>& session);

 private:
  std::function<void()> ended_;
  std::mutex mu_;
  std::set<std::shared_ptr<WebSocketSession>> sessions_;
  std::atomic<int> open_{0};
  std::atomic<bool> going_away_{false};
};

}  // namespace scribe::api
