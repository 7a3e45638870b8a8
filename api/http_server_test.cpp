#include "api/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "domain/limits.h"

namespace scribe::api {
namespace {

// Sends one request over loopback and returns everything the server writes
// before closing (or before 5 s of silence, so a broken server cannot hang
// the test).
std::string exchange(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "socket failed";
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

// A server whose every request is parked: the test decides when, and whether,
// the application answers, as a long-poll or a slow handler would.
class ParkedRequests : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(
        "127.0.0.1", 0, 1, limits::kMaxJsonBodyBytes,
        [this](Request, Responder respond) {
          std::lock_guard lock(mu_);
          parked_ = std::move(respond);
          cv_.notify_all();
        },
        [](const Request&, const Error&) { return Response{400, "text/plain", {}, "bad", false, nullptr}; });
    port_ = server_->port();
    server_thread_ = std::thread([this] { server_->run(); });
  }

  void TearDown() override {
    if (server_thread_.joinable()) {
      server_->shutdown(0);
      server_thread_.join();
    }
  }

  // Waits for the request and takes its responder, so that the test holds
  // the only copy the server handed out.
  Responder take_parked() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return parked_.has_value(); });
    Responder r = std::move(*parked_);
    parked_.reset();
    return r;
  }

  // Shuts the server down without waiting for owed answers and destroys it.
  void destroy_server() {
    server_->shutdown(0);
    server_thread_.join();
    server_.reset();
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::thread server_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Responder> parked_;
};

const std::string kGet = "GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

// A worker thread destroys its copy of the responder some time after
// answering, here after the server is gone. If that copy still owned the
// connection, its socket would be destroyed against a freed io_context
// (AddressSanitizer reports it; the sanitizer build of the suite runs this).
TEST_F(ParkedRequests, ResponderKeptAfterAnsweringDoesNotOutliveTheServer) {
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  Responder kept = take_parked();
  kept(Response{200, "text/plain", {}, "answered", false, nullptr});
  client.join();
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  EXPECT_NE(reply.find("answered"), std::string::npos) << reply;

  destroy_server();
  kept = nullptr;  // the last copy goes here, on this thread
}

// The grace period ran out with an answer still owed: the connection is
// closed when the server goes, and the late answer is dropped instead of
// being posted to an io_context that no longer exists.
TEST_F(ParkedRequests, AnswerOwedWhenTheServerGoesIsDropped) {
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  Responder owed = take_parked();
  destroy_server();
  client.join();
  EXPECT_EQ(reply, "") << "no response was written, and the client saw the connection close";

  owed(Response{200, "text/plain", {}, "too late", false, nullptr});
  owed(Response{200, "text/plain", {}, "twice", false, nullptr});
  owed = nullptr;
}

// A responder answers once; a second call (a handler bug) writes nothing more.
TEST_F(ParkedRequests, SecondAnswerIsIgnored) {
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  Responder respond = take_parked();
  respond(Response{200, "text/plain", {}, "first", false, nullptr});
  respond(Response{500, "text/plain", {}, "second", false, nullptr});
  client.join();
  EXPECT_NE(reply.find("first"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("second"), std::string::npos) << reply;
}

}  // namespace
}  // namespace scribe::api
