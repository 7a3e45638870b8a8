#include "api/websocket_server.h"

#include <boost/asio.hpp>
#include <boost/beast/websocket.hpp>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <exception>
#include <sstream>

#include "common/log.h"
#include "common/text.h"

namespace scribe::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;

namespace {
// The opening handshake is only the 101 (the request was read already); the
// closing one waits for the peer's close frame this long at most.
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);

bool has_token(const std::optional<std::string>& value, std::string_view token) {
  if (!value) return false;
  for (const auto& item : split_list(*value, EmptyItems::kDrop))
    if (strcasecmp(item.c_str(), std::string(token).c_str()) == 0) return true;
  return false;
}

// A Sec-WebSocket-Key is 16 bytes in base64: 22 characters and "==".
bool valid_key(const std::string& key) {
  if (key.size() != 24 || !key.ends_with("==")) return false;
  return std::all_of(key.begin(), key.begin() + 22,
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/'; });
}

// The code that ended a connection whose read failed with `ec`, when the
// server had sent no close frame of its own before.
uint16_t end_code(const beast::error_code& ec, const websocket::close_reason& received) {
  if (ec == websocket::error::closed)
    return received.code == websocket::close_code::none ? ws_close::kNoStatus : static_cast<uint16_t>(received.code);
  if (ec == websocket::error::message_too_big) return ws_close::kTooBig;
  if (ec == websocket::error::bad_frame_payload) return ws_close::kInvalidPayload;
  if (ec == websocket::condition::protocol_violation) return ws_close::kProtocolError;
  return ws_close::kAbnormal;
}
}  // namespace

HandshakeCheck check_handshake(const Request& head, unsigned http_version) {
  HandshakeCheck check;
  if (head.method != "GET" || !has_token(head.header("upgrade"), "websocket")) return check;
  check.upgrade = true;
  auto refuse = [&](std::string field, std::string message) {
    check.error = Error::invalid(field, "not a valid WebSocket handshake: " + message);
  };
  if (http_version < 11) refuse("version", "it needs HTTP/1.1");
  else if (!has_token(head.header("connection"), "upgrade")) refuse("connection", "Connection must name upgrade");
  else if (!valid_key(head.header("sec-websocket-key").value_or("")))
    refuse("sec-websocket-key", "Sec-WebSocket-Key must be 16 bytes in base64");
  else if (head.header("sec-websocket-version").value_or("") != "13")
    check.error = Error("invalid_request", "this server speaks WebSocket version 13 (Sec-WebSocket-Version: 13)",
                        {{"field", "sec-websocket-version"}}, 426);
  return check;
}

// The application's handle (WebSocketConnection). It does not own the
// session while nobody is writing: it holds it in `session`, which the
// session empties when it ends and the hub's abandon() empties when the
// server goes, and it posts to the session's strand under `mu`. So a copy
// kept by a worker after the server is gone holds no socket and no strand
// (the use-after-free api/http_server.cpp's AnswerSlot avoids).
class WebSocketConn final : public WebSocketConnection {
 public:
  enum class Kind { kText, kBinary, kClose };
  struct Out {
    Kind kind;
    std::string data;
    uint16_t code = 0;
  };

  WebSocketConn(std::string remote, std::size_t max_queued) : remote_(std::move(remote)), max_queued_(max_queued) {}

  void send_text(std::string text) override { queue({Kind::kText, std::move(text)}); }
  void send_binary(std::string bytes) override { queue({Kind::kBinary, std::move(bytes)}); }
  void close(uint16_t code, std::string reason) override {
    if (reason.size() > 123) reason.resize(123);  // a close frame's payload is at most 125 bytes
    queue({Kind::kClose, std::move(reason), code});
  }
  std::size_t queued_bytes() const override { return queued_.load(); }
  const std::string& remote() const override { return remote_; }

  void queue(Out out);

  std::mutex mu;
  std::shared_ptr<WebSocketSession> session;
  std::deque<Out> out;
  bool close_queued = false;
  bool pump_posted = false;
  std::atomic<std::size_t> queued_{0};

 private:
  std::string remote_;
  std::size_t max_queued_;
};

// One upgraded connection, on its strand.
class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(beast::tcp_stream stream, http::request<http::string_body> req,
                   std::shared_ptr<WebSocketAccept> accept, std::vector<std::pair<std::string, std::string>> headers,
                   std::string remote, std::string early, WebSocketHub& hub)
      : ws_(std::move(stream)),
        executor_(ws_.get_executor()),
        req_(std::move(req)),
        accept_(std::move(accept)),
        headers_(std::move(headers)),
        early_(std::move(early)),
        conn_(std::make_shared<WebSocketConn>(std::move(remote), accept_->max_queued_bytes)),
        hub_(hub) {}

  // A copy taken at construction: read from other threads (posting to the strand).
  beast::tcp_stream::executor_type executor() const { return executor_; }

  void run() {
    {
      std::lock_guard lock(conn_->mu);
      conn_->session = shared_from_this();
    }
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = kHandshakeTimeout;
    timeouts.idle_timeout = std::chrono::seconds(std::max(2, accept_->keepalive_seconds));
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.set_option(websocket::stream_base::decorator(
        [headers = std::move(headers_), protocol = accept_->subprotocol](websocket::response_type& res) {
          res.set(http::field::server, "scribe");
          for (const auto& [name, value] : headers) {
            const std::string lower = to_lower(name);
            // The handshake's own fields are Beast's; a body has no place in a 101.
            if (lower == "connection" || lower == "upgrade" || lower.starts_with("sec-websocket-") ||
                lower == "content-length" || lower == "content-type" || lower == "transfer-encoding")
              continue;
            res.set(name, value);
          }
          if (!protocol.empty()) res.set(http::field::sec_websocket_protocol, protocol);
        }));
    // The size limit is enforced in on_read: Beast's own (here only a
    // backstop) closes with 1009 but then tears the socket down at once, and
    // with the rest of the peer's message still arriving the kernel answers
    // with a reset that can destroy the close frame before the peer reads it.
    max_message_ = accept_->max_message_bytes;
    ws_.read_message_max(max_message_ + kReadPiece);
    ws_.auto_fragment(false);
    busy_ = true;
    auto done = [self = shared_from_this()](beast::error_code ec) { self->on_accept(ec); };
    if (early_.empty()) return ws_.async_accept(req_, std::move(done));
    // Beast takes bytes already read only with the request before them (it
    // parses that again); what follows the request becomes its first frames.
    std::ostringstream raw;
    raw << req_;
    early_.insert(0, raw.str());
    ws_.async_accept(net::buffer(early_), std::move(done));
  }

  // A message was queued, or the hub asks for the close: writes the next
  // item unless a write is in flight.
  void pump() {
    if (!opened_ || busy_ || ended_) return;
    WebSocketConn::Out next;
    {
      std::lock_guard lock(conn_->mu);
      conn_->pump_posted = false;
      if (conn_->out.empty()) return;
      next = std::move(conn_->out.front());
      conn_->out.pop_front();
    }
    busy_ = true;
    if (next.kind == WebSocketConn::Kind::kClose) {
      sent_code_ = next.code;
      ws_.async_close(websocket::close_reason(static_cast<websocket::close_code>(next.code), next.data),
                      [self = shared_from_this()](beast::error_code) { self->after_write(false); });
      return;
    }
    ws_.text(next.kind == WebSocketConn::Kind::kText);
    auto data = std::make_shared<std::string>(std::move(next.data));
    ws_.async_write(net::buffer(*data), [self = shared_from_this(), data](beast::error_code ec, std::size_t) {
      self->conn_->queued_ -= data->size();
      self->after_write(static_cast<bool>(ec));
    });
  }

  // The write bound was passed: the peer does not read, so no close frame
  // would reach it either. The socket closes now; the pending read and
  // write fail, and the session ends with kAbnormal.
  void abort() {
    if (ended_) return;
    log::warn("websocket dropped: the peer does not read", {{"remote", conn_->remote()}});
    aborted_ = true;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

  void on_going_away() {
    if (!opened_ || ended_ || told_going_away_) return;
    told_going_away_ = true;
    if (handler_.on_shutdown) guarded([&] { handler_.on_shutdown(); });
    conn_->close(ws_close::kGoingAway, "server shutting down");
  }

  // Ends the session (once): the application's handle lets go of it, and
  // on_closed runs. Also called by the hub's abandon() after the I/O
  // threads have stopped.
  void finish(uint16_t code) {
    if (ended_) return;
    ended_ = true;
    {
      std::lock_guard lock(conn_->mu);
      conn_->session.reset();
      conn_->out.clear();
      conn_->close_queued = true;
      conn_->queued_ = 0;
    }
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    // Uncounted first, so that on_closed sees the server without it.
    hub_.remove(shared_from_this());
    WebSocketHandler handler = std::exchange(handler_, {});
    if (opened_ && handler.on_closed) guarded([&] { handler.on_closed(code); });
  }

  uint16_t code_so_far() const {
    if (aborted_) return ws_close::kAbnormal;
    if (sent_code_) return *sent_code_;
    return ended_code_.value_or(ws_close::kAbnormal);
  }

 private:
  void on_accept(beast::error_code ec) {
    busy_ = false;
    req_ = {};
    early_ = std::string();
    if (ec) {
      log::info("websocket handshake failed", {{"remote", conn_->remote()}, {"error", ec.message()}});
      return finish(ws_close::kAbnormal);
    }
    opened_ = true;
    auto accept = std::exchange(accept_, nullptr);  // releases what on_open captured
    if (accept->on_open) guarded([&] { handler_ = accept->on_open(conn_); });
    read();
    if (hub_.is_going_away()) on_going_away();
    pump();
  }

  // A message is read a piece at a time, at most one byte past the limit.
  void read() {
    reading_ = true;
    const std::size_t room = max_message_ + 1 - std::min(in_.size(), max_message_);
    ws_.async_read_some(in_, std::min(room, kReadPiece),
                        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    reading_ = false;
    if (ec) {
      ended_code_ = end_code(ec, ws_.reason());
      // A data write still pending would keep the session (a peer that does
      // not read): the connection is over, so it is cancelled. A close in
      // flight is left to end by itself (bounded by the handshake timeout).
      if (busy_ && !sent_code_) {
        beast::error_code ignored;
        beast::get_lowest_layer(ws_).socket().close(ignored);
      }
      return maybe_finish();
    }
    if (in_.size() > max_message_) {
      // No more reads: the close frame goes out after what is queued, and
      // Beast's close reads (and drops) the rest until the peer's close.
      in_.consume(in_.size());
      conn_->close(ws_close::kTooBig, "message too big");
      return;
    }
    if (!ws_.is_message_done()) return read();
    std::string message = beast::buffers_to_string(in_.data());
    in_.consume(in_.size());
    const bool text = ws_.got_text();
    if (!ended_)
      guarded([&] {
        if (text && handler_.on_text) handler_.on_text(std::move(message));
        else if (!text && handler_.on_binary) handler_.on_binary(std::move(message));
      });
    read();
  }

  void after_write(bool failed) {
    busy_ = false;
    if (failed || sent_code_) return maybe_finish();
    pump();
  }

  // The session ends once nothing is in flight: after a failed write the
  // read fails too (the socket is broken or closed), and after the close
  // frame went out the read gets the peer's answer (or the timeout).
  void maybe_finish() {
    if (reading_ || busy_) return;
    finish(code_so_far());
  }

  // An application callback that throws is a bug: it is logged, and the
  // connection closes with 1011 (internal error) instead of taking the I/O
  // thread down.
  template <class F>
  void guarded(F&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      log::error("websocket handler failed", {{"remote", conn_->remote()}, {"error", e.what()}});
      conn_->close(ws_close::kInternalError, "internal error");
    }
  }

  websocket::stream<beast::tcp_stream> ws_;
  const beast::tcp_stream::executor_type executor_;
  http::request<http::string_body> req_;
  std::shared_ptr<WebSocketAccept> accept_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::string early_;
  std::shared_ptr<WebSocketConn> conn_;
  WebSocketHub& hub_;
  WebSocketHandler handler_;
  beast::flat_buffer in_;
  std::size_t max_message_ = 0;
  static constexpr std::size_t kReadPiece = 64 * 1024;
  std::optional<uint16_t> sent_code_;
  std::optional<uint16_t> ended_code_;
  bool opened_ = false;
  bool reading_ = false;
  bool busy_ = false;  // the handshake, a write or the close in flight
  bool aborted_ = false;
  bool told_going_away_ = false;
  bool ended_ = false;
};

void WebSocketConn::queue(Out item) {
  std::lock_guard lock(mu);
  if (!session || close_queued) return;
  if (item.kind == Kind::kClose) close_queued = true;
  else queued_ += item.data.size();
  if (item.kind != Kind::kClose && queued_.load() > max_queued_) {
    // Nothing more is written: the session drops the connection.
    close_queued = true;
    out.clear();
    net::post(session->executor(), [s = session] { s->abort(); });
    return;
  }
  out.push_back(std::move(item));
  if (pump_posted) return;
  pump_posted = true;
  // Posting under `mu`: abandon() either empties `session` first, or finds
  // this handler queued in the io_context, which destroys it.
  net::post(session->executor(), [s = session] { s->pump(); });
}

void WebSocketHub::start(beast::tcp_stream stream, http::request<http::string_body> req,
                         std::shared_ptr<WebSocketAccept> accept,
                         std::vector<std::pair<std::string, std::string>> headers, std::string remote,
                         std::string early) {
  auto session = std::make_shared<WebSocketSession>(std::move(stream), std::move(req), std::move(accept),
                                                    std::move(headers), std::move(remote), std::move(early), *this);
  {
    std::lock_guard lock(mu_);
    sessions_.insert(session);
    ++open_;
  }
  // Posted: the caller (the HTTP session, on the same strand) first counts
  // its request finished, before the 101 can reach the client.
  net::post(session->executor(), [session] { session->run(); });
}

void WebSocketHub::going_away() {
  going_away_ = true;
  std::vector<std::shared_ptr<WebSocketSession>> open;
  {
    std::lock_guard lock(mu_);
    open.assign(sessions_.begin(), sessions_.end());
  }
  for (auto& s : open) net::post(s->executor(), [s] { s->on_going_away(); });
}

void WebSocketHub::remove(const std::shared_ptr<WebSocketSession>& session) {
  {
    std::lock_guard lock(mu_);
    if (sessions_.erase(session) == 0) return;
    --open_;
  }
  ended_();
}

void WebSocketHub::abandon() {
  std::vector<std::shared_ptr<WebSocketSession>> left;
  {
    std::lock_guard lock(mu_);
    left.assign(sessions_.begin(), sessions_.end());
  }
  for (auto& s : left) s->finish(s->code_so_far());
}

}  // namespace scribe::api
