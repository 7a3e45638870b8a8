// WebSocket connections through the real HttpServer on loopback, with
// Beast's WebSocket client on the other end.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/http_server.h"
#include "api/websocket.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

// Sends raw bytes and returns all the server writes before it closes (5 s
// receive timeout, so a broken server cannot hang the test).
std::string raw_exchange(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return got;
}

std::string handshake_request(const std::string& target, const std::string& extra) {
  return "GET " + target +
         " HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
         extra + "\r\n";
}

// A blocking Beast client whose reads give up after 5 s.
struct Client {
  net::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};

  beast::error_code connect(uint16_t port, const std::string& target,
                            const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    beast::error_code ec;
    ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
    if (ec) return ec;
    timeval tv{5, 0};
    ::setsockopt(ws.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [k, v] : headers) req.set(k, v);
    }));
    ws.handshake(response, "127.0.0.1", target, ec);
    return ec;
  }
  // The next message, or the error that ended the read.
  std::string read(beast::error_code& ec) {
    beast::flat_buffer buffer;
    ws.read(buffer, ec);
    return beast::buffers_to_string(buffer.data());
  }
  // Reads until the connection ends; the close code the server sent, or 0.
  int read_until_closed() {
    for (;;) {
      beast::error_code ec;
      read(ec);
      if (ec == websocket::error::closed) return ws.reason().code;
      if (ec) {
        last_error = ec.message();
        return 0;
      }
    }
  }
  websocket::response_type response;
  std::string last_error;
};

// What the server's connections went through.
struct Record {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> closed;  // on_closed codes, in order
  int shutdowns = 0;
  std::shared_ptr<WebSocketConnection> last;
  std::vector<Request> requests;

  template <class P>
  bool wait(P p, std::chrono::seconds s = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, s, p);
  }
};

class WebSocketServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(
        "127.0.0.1", 0, 2, limits::kMaxJsonBodyBytes, [this](Request req, Responder respond) { route(req, respond); },
        [](const Request&, const Error& e) {
          return Response::json(e.http_status(), Json{{"error", {{"code", e.code()}, {"message", e.message()}}}});
        });
    port_ = server_->port();
    thread_ = std::thread([this] { server_->run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      server_->shutdown(5);
      thread_.join();
    }
    server_.reset();
  }

  std::shared_ptr<WebSocketAccept> accept(std::function<void(WebSocketConnection&, WebSocketHandler&)> setup,
                                          std::size_t max_message = 64 * 1024, std::size_t max_queued = 4 << 20) {
    auto a = std::make_shared<WebSocketAccept>();
    a->max_message_bytes = max_message;
    a->max_queued_bytes = max_queued;
    a->on_open = [this, setup](std::shared_ptr<WebSocketConnection> conn) {
      WebSocketHandler h;
      h.on_closed = [this](uint16_t code) {
        std::lock_guard lock(rec_.mu);
        rec_.closed.push_back(code);
        rec_.cv.notify_all();
      };
      if (setup) setup(*conn, h);
      std::lock_guard lock(rec_.mu);
      rec_.last = conn;
      rec_.cv.notify_all();
      return h;
    };
    return a;
  }

  // The routes of the tests, by path.
  void route(Request req, const Responder& respond) {
    {
      std::lock_guard lock(rec_.mu);
      rec_.requests.push_back(req);
    }
    Response res;
    std::vector<std::pair<std::string, std::string>> query;
    std::string path;
    parse_target(req.target, path, query);
    req.query = query;
    if (path == "/plain") {
      res = Response::json(200, Json{{"upgrade", req.websocket_upgrade}});
    } else if (!req.websocket_upgrade) {
      res = Response::json(400, Json{{"error", {{"code", "not_an_upgrade"}}}});
      if (path == "/misuse") res.websocket = accept(nullptr);
    } else if (path == "/echo") {
      res.websocket = accept([](WebSocketConnection& c, WebSocketHandler& h) {
        h.on_text = [&c](std::string s) { c.send_text("echo:" + s); };
        h.on_binary = [&c](std::string s) { c.send_binary(s + s); };
      });
      res.set_header("X-Request-Id", "req_ws");
    } else if (path == "/auth") {
      const bool ok =
          req.query_param("ticket") == "t1" || req.header("authorization") == std::optional<std::string>("Bearer k1");
      if (ok) res.websocket = accept(nullptr);
      else res = Response::json(401, Json{{"error", {{"code", "unauthorized"}, {"message", "no ticket"}}}});
    } else if (path == "/bye") {
      res.websocket = accept([](WebSocketConnection& c, WebSocketHandler&) {
        c.send_text("first");
        c.close(4001, "ticket expired");
        c.send_text("after close");  // dropped
      });
    } else if (path == "/small") {
      res.websocket = accept(nullptr, 1024);
    } else if (path == "/keepalive") {
      res.websocket = accept(nullptr);
      res.websocket->keepalive_seconds = 2;
    } else if (path == "/flood") {
      res.websocket = accept(nullptr, 64 * 1024, 1 << 20);
    } else if (path == "/shutdown") {
      res.websocket = accept([this](WebSocketConnection& c, WebSocketHandler& h) {
        h.on_shutdown = [this, &c] {
          c.send_text("going away");
          std::lock_guard lock(rec_.mu);
          ++rec_.shutdowns;
        };
      });
    } else {
      res = Response::json(404, Json{{"error", {{"code", "not_found"}}}});
    }
    respond(std::move(res));
  }

  std::vector<int> closed() {
    std::lock_guard lock(rec_.mu);
    return rec_.closed;
  }
  bool wait_closed(std::size_t n) {
    return rec_.wait([&] { return rec_.closed.size() >= n; });
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread thread_;
  Record rec_;
};

TEST_F(WebSocketServer, EchoesTextAndBinaryAfterTheHandshake) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/echo"));
  EXPECT_EQ(c.response.result_int(), 101);
  EXPECT_EQ(c.response["X-Request-Id"], "req_ws");
  EXPECT_EQ(server_->websockets(), 1);
  EXPECT_EQ(server_->in_flight(), 0) << "an upgraded connection is not a request in flight";
  c.ws.text(true);
  c.ws.write(net::buffer(std::string("héllo")));
  beast::error_code ec;
  EXPECT_EQ(c.read(ec), "echo:héllo");
  EXPECT_TRUE(c.ws.got_text());
  c.ws.binary(true);
  std::string bytes("\x00\x01\xff", 3);
  c.ws.write(net::buffer(bytes));
  EXPECT_EQ(c.read(ec), bytes + bytes);
  EXPECT_TRUE(c.ws.got_binary());
  {
    std::lock_guard lock(rec_.mu);
    ASSERT_FALSE(rec_.requests.empty());
    EXPECT_TRUE(rec_.requests.back().websocket_upgrade);
    ASSERT_TRUE(rec_.last);
    EXPECT_EQ(rec_.last->remote(), "127.0.0.1");
  }
  c.ws.close(websocket::close_code::normal);
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{1000});
  EXPECT_TRUE(rec_.wait([&] { return server_->websockets() == 0; }));
}

// The peer's own code reaches on_closed, once.
TEST_F(WebSocketServer, ClientCloseCodeReachesOnClosedOnce) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/echo"));
  c.ws.close(websocket::close_reason(static_cast<websocket::close_code>(4321), "done"));
  ASSERT_TRUE(wait_closed(1));
  std::this_thread::sleep_for(200ms);  // a second call would come right after the first
  EXPECT_EQ(closed(), std::vector<int>{4321});
}

TEST_F(WebSocketServer, ResetConnectionEndsWithAbnormalClose) {
  {
    Client c;
    ASSERT_FALSE(c.connect(port_, "/echo"));
    ASSERT_TRUE(rec_.wait([&] { return rec_.last != nullptr; }));
    linger l{1, 0};  // close with a reset, no close frame
    ::setsockopt(c.ws.next_layer().native_handle(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{1006});
}

TEST_F(WebSocketServer, PlainRequestsAreUnchanged) {
  const std::string reply = raw_exchange(port_, "GET /plain HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  EXPECT_NE(reply.find("{\"upgrade\":false}"), std::string::npos) << reply;
  // Upgrade naming another protocol is plain HTTP as well.
  const std::string h2c =
      raw_exchange(port_, "GET /plain HTTP/1.1\r\nHost: t\r\nUpgrade: h2c\r\nConnection: close\r\n\r\n");
  EXPECT_NE(h2c.find("{\"upgrade\":false}"), std::string::npos) << h2c;
}

// A route's refusal is written as HTTP, and the connection then closes
// (exchange returns only once the server has closed it).
TEST_F(WebSocketServer, RefusalIsAnHttpAnswerAndClosesTheConnection) {
  const std::string reply = raw_exchange(port_, handshake_request("/auth", "Sec-WebSocket-Version: 13\r\n"));
  EXPECT_NE(reply.find("HTTP/1.1 401"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\"code\":\"unauthorized\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  Client c;
  EXPECT_EQ(c.connect(port_, "/auth"), websocket::error::upgrade_declined);
}

TEST_F(WebSocketServer, RouteAuthenticatesFromTheQueryOrTheAuthorizationHeader) {
  Client by_ticket;
  EXPECT_FALSE(by_ticket.connect(port_, "/auth?ticket=t1"));
  Client by_header;
  EXPECT_FALSE(by_header.connect(port_, "/auth", {{"Authorization", "Bearer k1"}}));
  Client wrong;
  EXPECT_TRUE(wrong.connect(port_, "/auth?ticket=t2"));
}

TEST_F(WebSocketServer, MalformedHandshakesAreRefusedInTheEnvelope) {
  const std::string no_key =
      raw_exchange(port_,
                   "GET /echo HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Version: 13\r\n\r\n");
  EXPECT_NE(no_key.find("HTTP/1.1 400"), std::string::npos) << no_key;
  EXPECT_NE(no_key.find("Sec-WebSocket-Key"), std::string::npos) << no_key;
  const std::string bad_key = raw_exchange(port_,
                                           "GET /echo HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
                                           "Connection: Upgrade\r\nSec-WebSocket-Key: abc\r\n"
                                           "Sec-WebSocket-Version: 13\r\n\r\n");
  EXPECT_NE(bad_key.find("HTTP/1.1 400"), std::string::npos) << bad_key;
  const std::string no_connection = raw_exchange(port_,
                                                 "GET /echo HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
                                                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                                 "Sec-WebSocket-Version: 13\r\n\r\n");
  EXPECT_NE(no_connection.find("HTTP/1.1 400"), std::string::npos) << no_connection;
  const std::string version = raw_exchange(port_, handshake_request("/echo", "Sec-WebSocket-Version: 8\r\n"));
  EXPECT_NE(version.find("HTTP/1.1 426"), std::string::npos) << version;
  EXPECT_NE(version.find("Sec-WebSocket-Version: 13"), std::string::npos) << version;
  EXPECT_NE(version.find("\"error\""), std::string::npos) << version;
  std::lock_guard lock(rec_.mu);
  EXPECT_TRUE(rec_.requests.empty()) << "a malformed handshake never reaches the routes";
}

// A client that sends its first frame with the handshake, without waiting
// for the 101: the frame is not lost.
TEST_F(WebSocketServer, FrameSentBeforeTheAnswerIsRead) {
  // A masked text frame "hello" (mask 1 2 3 4), as a client must send it.
  std::string frame = "\x81\x85\x01\x02\x03\x04";
  const std::string text = "hello";
  for (std::size_t i = 0; i < text.size(); ++i) frame += static_cast<char>(text[i] ^ (i % 4 + 1));
  const std::string request = handshake_request("/echo", "Sec-WebSocket-Version: 13\r\n") + frame;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string got;
  char buf[4096];
  for (ssize_t n; got.find("echo:hello") == std::string::npos && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  EXPECT_NE(got.find("HTTP/1.1 101"), std::string::npos) << got;
  EXPECT_NE(got.find("\r\n\r\n\x81\x0a"
                     "echo:hello"),
            std::string::npos)
      << got;
}

// An acceptance in answer to a plain request is a route's bug: 500.
TEST_F(WebSocketServer, AcceptingAPlainRequestIsAnInternalError) {
  const std::string reply = raw_exchange(port_, "GET /misuse HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_NE(reply.find("HTTP/1.1 500"), std::string::npos) << reply;
}

// close() goes after what was queued before it; what comes after is dropped.
TEST_F(WebSocketServer, ServerCloseCodeArrivesAfterTheQueuedMessages) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/bye"));
  beast::error_code ec;
  EXPECT_EQ(c.read(ec), "first");
  EXPECT_EQ(c.read_until_closed(), 4001);
  EXPECT_EQ(c.ws.reason().reason, "ticket expired");
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{4001});
}

TEST_F(WebSocketServer, OversizeMessageClosesWith1009) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/small"));
  c.ws.binary(true);
  c.ws.write(net::buffer(std::string(2000, 'x')));
  EXPECT_EQ(c.read_until_closed(), 1009) << c.last_error;
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{1009});
}

TEST_F(WebSocketServer, TextThatIsNotUtf8ClosesWith1007) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/echo"));
  c.ws.text(true);
  c.ws.write(net::buffer(std::string("\xc3\x28")));
  EXPECT_EQ(c.read_until_closed(), 1007);
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{1007});
}

// A peer that never reads: the queue passes its bound (1 MiB here) and the
// server drops the connection instead of buffering without end.
TEST_F(WebSocketServer, ReaderThatNeverReadsIsDroppedAtTheQueueBound) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/flood"));
  std::shared_ptr<WebSocketConnection> conn;
  ASSERT_TRUE(rec_.wait([&] { return rec_.last != nullptr; }));
  {
    std::lock_guard lock(rec_.mu);
    conn = rec_.last;
  }
  const std::string piece(256 * 1024, 'a');
  std::size_t sent = 0, most_queued = 0;
  // Loopback socket buffers take some megabytes; the bound trips after them.
  while (closed().empty() && sent < (256u << 20)) {
    conn->send_binary(piece);
    sent += piece.size();
    most_queued = std::max(most_queued, conn->queued_bytes());
    if (conn->queued_bytes() > (512u << 10)) std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(wait_closed(1)) << "still open after " << sent << " bytes";
  EXPECT_EQ(closed(), std::vector<int>{1006});
  EXPECT_LE(most_queued, (1u << 20) + piece.size());
  EXPECT_EQ(conn->queued_bytes(), 0u);
  conn->send_text("after the end");  // does nothing
}

// The server pings a quiet peer; one that answers (Beast's client answers
// while it reads) stays, one that does not is dropped after the keepalive.
TEST_F(WebSocketServer, PeerThatStopsAnsweringPingsIsDropped) {
  Client alive;
  ASSERT_FALSE(alive.connect(port_, "/keepalive"));
  Client dead;
  ASSERT_FALSE(dead.connect(port_, "/keepalive"));
  std::atomic<int> pings{0};
  alive.ws.control_callback([&](websocket::frame_type kind, beast::string_view) {
    if (kind == websocket::frame_type::ping) ++pings;
  });
  // Reads (answering pings) until the dead one is dropped, at about 2 s.
  std::thread reader([&] {
    beast::error_code ec;
    alive.read(ec);
  });
  ASSERT_TRUE(wait_closed(1));
  EXPECT_EQ(closed(), std::vector<int>{1006});
  EXPECT_GE(pings.load(), 1);
  EXPECT_EQ(server_->websockets(), 1) << "the peer answering pings is still connected";
  alive.ws.next_layer().shutdown(tcp::socket::shutdown_both);
  reader.join();
}

// Messages sent from several threads at once all arrive, each whole.
TEST_F(WebSocketServer, SendsFromManyThreadsArriveWhole) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/echo"));
  ASSERT_TRUE(rec_.wait([&] { return rec_.last != nullptr; }));
  std::shared_ptr<WebSocketConnection> conn;
  {
    std::lock_guard lock(rec_.mu);
    conn = rec_.last;
  }
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t)
    senders.emplace_back([conn, t] {
      for (int i = 0; i < 50; ++i) conn->send_text(std::string(1000 + i, static_cast<char>('a' + t)));
    });
  for (auto& s : senders) s.join();
  std::vector<int> next(4, 0);
  for (int n = 0; n < 200; ++n) {
    beast::error_code ec;
    const std::string m = c.read(ec);
    ASSERT_FALSE(ec) << ec.message();
    const int t = m[0] - 'a';
    ASSERT_TRUE(t >= 0 && t < 4);
    EXPECT_EQ(m, std::string(1000 + next[t], m[0])) << "each thread's messages in its order";
    ++next[t];
  }
}

TEST_F(WebSocketServer, ShutdownClosesWith1001AfterOnShutdown) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/shutdown"));
  ASSERT_TRUE(rec_.wait([&] { return rec_.last != nullptr; }));
  std::thread stopper([this] { server_->shutdown(10); });
  beast::error_code ec;
  EXPECT_EQ(c.read(ec), "going away");
  EXPECT_EQ(c.read_until_closed(), 1001);
  stopper.join();  // returns once the connection has ended, well before the grace
  thread_.join();
  EXPECT_EQ(closed(), std::vector<int>{1001});
  EXPECT_EQ(rec_.shutdowns, 1);
  EXPECT_EQ(server_->websockets(), 0);
}

// The grace ran out with a peer that never answers the close: the
// connection ends when the server is destroyed, on_closed included, and a
// handle the application kept is harmless afterwards (AddressSanitizer
// checks the sanitizer build of this test).
TEST_F(WebSocketServer, ConnectionOpenWhenTheServerGoesEndsThenAndItsHandleIsInert) {
  Client c;
  ASSERT_FALSE(c.connect(port_, "/echo"));
  ASSERT_TRUE(rec_.wait([&] { return rec_.last != nullptr; }));
  std::shared_ptr<WebSocketConnection> kept;
  {
    std::lock_guard lock(rec_.mu);
    kept = std::exchange(rec_.last, nullptr);
  }
  server_->shutdown(1);  // the client does not read: the close handshake never completes
  thread_.join();
  server_.reset();
  EXPECT_EQ(closed(), std::vector<int>{1001}) << "the close frame was sent, so its code";
  kept->send_text("late");
  kept->close(1000, "late");
  EXPECT_EQ(kept->queued_bytes(), 0u);
  kept.reset();
}

}  // namespace
}  // namespace scribe::api
