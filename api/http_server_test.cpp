#include "api/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
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

// A connected socket to the server on loopback, with a 5 s receive timeout;
// -1 on failure.
int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
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
        [](const Request&, const Error&) {
          return Response{400, "text/plain", {}, "bad", false, nullptr, nullptr, nullptr};
        });
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
  kept(Response{200, "text/plain", {}, "answered", false, nullptr, nullptr, nullptr});
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

  owed(Response{200, "text/plain", {}, "too late", false, nullptr, nullptr, nullptr});
  owed(Response{200, "text/plain", {}, "twice", false, nullptr, nullptr, nullptr});
  owed = nullptr;
}

// A responder answers once; a second call (a handler bug) writes nothing more.
TEST_F(ParkedRequests, SecondAnswerIsIgnored) {
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  Responder respond = take_parked();
  respond(Response{200, "text/plain", {}, "first", false, nullptr, nullptr, nullptr});
  respond(Response{500, "text/plain", {}, "second", false, nullptr, nullptr, nullptr});
  client.join();
  EXPECT_NE(reply.find("first"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("second"), std::string::npos) << reply;
}

// A file of `size` bytes of a pattern that differs from byte to byte, and
// what it holds.
struct TempFile {
  explicit TempFile(std::size_t size) : path(::testing::TempDir() + "file_body_" + std::to_string(::getpid())) {
    bytes.resize(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7919 + i / 251) & 0xFF);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
  std::string bytes;
};

// A hold whose release the test can await (a download slot, to the server).
struct Hold {
  std::shared_ptr<void> make() {
    return std::shared_ptr<void>(new int(0), [this](int* p) {
      delete p;
      std::lock_guard lock(mu);
      released = true;
      cv.notify_all();
    });
  }
  bool released_within(std::chrono::seconds s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, s, [this] { return released; });
  }
  bool is_released() {
    std::lock_guard lock(mu);
    return released;
  }
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
};

Response file_response(const std::string& path, uint64_t offset, uint64_t length, std::shared_ptr<void> hold) {
  Response res{206, "video/mp4", {}, "", false, nullptr, FileBody::open(path), nullptr};
  res.file->select(offset, length);
  res.file->hold = std::move(hold);
  return res;
}

TEST(FileBody, OpensSelectsAndReads) {
  TempFile f(1000);
  EXPECT_EQ(FileBody::open(f.path + ".missing"), nullptr);
  EXPECT_EQ(FileBody::open(::testing::TempDir()), nullptr);  // a directory
  auto body = FileBody::open(f.path);
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->file_size(), 1000u);
  EXPECT_EQ(body->length(), 1000u);
  body->select(990, 50);  // cut to the end of the file
  EXPECT_EQ(body->offset(), 990u);
  EXPECT_EQ(body->length(), 10u);
  char buf[64];
  EXPECT_EQ(body->read(0, buf, sizeof buf), 10);
  EXPECT_EQ(std::string(buf, 10), f.bytes.substr(990));
  EXPECT_EQ(body->read(4, buf, 3), 3);
  EXPECT_EQ(std::string(buf, 3), f.bytes.substr(994, 3));
  EXPECT_EQ(body->read(10, buf, sizeof buf), 0);
}

TEST_F(ParkedRequests, FileBodySendsTheSelectedBytesAndThenReleasesItsHold) {
  TempFile f(3 * 1000 * 1000 + 17);
  Hold hold;
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  take_parked()(file_response(f.path, 12345, 2 * 1000 * 1000 + 7, hold.make()));
  client.join();
  const auto end = reply.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << reply.substr(0, 200);
  const std::string head = reply.substr(0, end);
  EXPECT_NE(head.find("206"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Length: 2000007"), std::string::npos) << head;
  EXPECT_EQ(head.find("chunked"), std::string::npos) << head;
  EXPECT_TRUE(reply.substr(end + 4) == f.bytes.substr(12345, 2 * 1000 * 1000 + 7)) << "the body differs";
  EXPECT_TRUE(hold.released_within(std::chrono::seconds(5)));
}

TEST_F(ParkedRequests, FileBodyOfAHeadRequestSendsItsLengthOnly) {
  TempFile f(5000);
  Hold hold;
  std::string reply;
  std::thread client([&] { reply = exchange(port_, kGet); });
  Response res = file_response(f.path, 0, 5000, hold.make());
  res.head = true;
  take_parked()(std::move(res));
  client.join();
  EXPECT_NE(reply.find("Content-Length: 5000\r\n"), std::string::npos) << reply;
  EXPECT_TRUE(reply.ends_with("\r\n\r\n")) << reply;
  EXPECT_TRUE(hold.released_within(std::chrono::seconds(5)));
}

// A client that stops reading holds the download (and its slot) while it is
// stalled; once it goes away, the server's next write fails and the hold is
// released, though the body was never sent in full.
TEST_F(ParkedRequests, FileBodyHoldIsKeptForAStalledClientAndReleasedWhenItGoes) {
  // Larger than what the loopback socket buffers of both ends can take.
  TempFile f(32 * 1000 * 1000);
  Hold hold;
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::send(fd, kGet.data(), kGet.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kGet.size()));
  take_parked()(file_response(f.path, 0, f.bytes.size(), hold.make()));
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
  EXPECT_FALSE(hold.is_released()) << "released while the client is stalled mid-body";
  ::close(fd);  // unread data: the kernel resets the connection
  EXPECT_TRUE(hold.released_within(std::chrono::seconds(10)));
}

}  // namespace
}  // namespace scribe::api
