#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// WebSocket connections (RFC 6455) as the API layer sees them: no Beast
// types, like api/http.h. A route accepts a connection by answering the
// upgrade request (Request::websocket_upgrade) with a Response whose
// `websocket` is set; api/http_server.cpp does the handshake and the framing
// (Beast's websocket stream) on the same TCP connection.
namespace scribe::api {

// Close codes the server itself uses (RFC 6455 section 7.4.1).
namespace ws_close {
constexpr uint16_t kNormal = 1000;
constexpr uint16_t kGoingAway = 1001;  // server shutdown
constexpr uint16_t kProtocolError = 1002;
constexpr uint16_t kNoStatus = 1005;        // the peer's close frame carried no code
constexpr uint16_t kAbnormal = 1006;        // ended without a close handshake (never on the wire)
constexpr uint16_t kInvalidPayload = 1007;  // a text message that is not UTF-8
constexpr uint16_t kTooBig = 1009;          // a message over max_message_bytes
constexpr uint16_t kInternalError = 1011;   // a handler threw
}  // namespace ws_close

// One open connection. Every method may be called from any thread, also
// after the connection (or the server) is gone: then it does nothing.
class WebSocketConnection {
 public:
  virtual ~WebSocketConnection() = default;
  // Queues one message. Messages are written in the order queued, one write
  // at a time. A message queued after close() is dropped. When the bytes
  // queued and not yet written pass WebSocketAccept::max_queued_bytes (a
  // peer that does not read), the connection is dropped at once, without a
  // close frame, and on_closed gets ws_close::kAbnormal.
  virtual void send_text(std::string text) = 0;
  virtual void send_binary(std::string bytes) = 0;
  // Sends a close frame with `code` and `reason` (at most 123 bytes; cut
  // there) after every message queued before it; the connection then ends
  // (once the peer answers the close, or after the handshake timeout).
  // Only the first call counts. Messages the peer sent before it saw the
  // close may still reach on_text/on_binary until then.
  virtual void close(uint16_t code, std::string reason) = 0;
  // Outgoing bytes not yet written to the socket (the message being written
  // included): a producer compares it with what it means to send and merges
  // or drops what a slow reader would only see late.
  virtual std::size_t queued_bytes() const = 0;
  // The peer's address, as Request::remote.
  virtual const std::string& remote() const = 0;
};

// What the application does with a connection. The callbacks run on the
// connection's I/O thread, one at a time, and must be quick (hand anything
// slow to a worker): while one runs, no other message of this connection is
// read, and other connections on the thread wait.
struct WebSocketHandler {
  // One complete message each (fragments joined); text is valid UTF-8.
  std::function<void(std::string)> on_text;
  std::function<void(std::string)> on_binary;
  // The server is shutting down: the last chance to send something (an
  // in-band notice) and to close with a code of the application's own. If
  // the connection is still open when it returns (or it is unset), the
  // server closes it with ws_close::kGoingAway, "server shutting down".
  std::function<void()> on_shutdown;
  // Exactly once, when the connection has ended for any reason, with the
  // code of the close frame that ended it: the peer's (kNoStatus if it had
  // none), the one the server sent (close(), kGoingAway on shutdown, kTooBig,
  // kInvalidPayload, kProtocolError), or kAbnormal when it ended without a
  // close handshake (reset, a peer that stopped answering pings, the write
  // bound, the server destroyed). The handler is dropped after it, which
  // releases whatever its callbacks hold.
  std::function<void(uint16_t code)> on_closed;
};

// A route's acceptance of an upgrade request (Response::websocket). The
// response's status and body are ignored; its headers go into the 101
// answer (except the handshake's own).
struct WebSocketAccept {
  // Called once the handshake has completed (on the I/O thread, quick),
  // with the connection; returns the handler of its messages. Not called if
  // the handshake fails (the peer went away first).
  std::function<WebSocketHandler(std::shared_ptr<WebSocketConnection>)> on_open;
  // Sec-WebSocket-Protocol of the answer: one of those the client offered
  // (Request header "sec-websocket-protocol"), or empty for none.
  std::string subprotocol;
  // A message over this is refused: close ws_close::kTooBig.
  std::size_t max_message_bytes = 64 * 1024;
  // Outgoing bytes a connection may have queued (see send_text).
  std::size_t max_queued_bytes = 4 * 1024 * 1024;
  // Dead peers: after half of this with nothing received the server pings;
  // after all of it the connection ends (kAbnormal). (The closing handshake
  // waits at most 10 s for the peer's close frame.) Idle timeouts of the
  // application's own are its business.
  int keepalive_seconds = 60;
};

}  // namespace scribe::api
