#include "api/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fcntl.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "common/log.h"

namespace scribe::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr auto kIdleTimeout = std::chrono::seconds(75);
}

class Session;

struct HttpServer::Impl {
  Impl(std::size_t limit, Dispatch d, ErrorRenderer r)
      : body_limit(limit), dispatch(std::move(d)), render_error(std::move(r)) {}

  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  int io_threads = 1;
  std::size_t body_limit;
  Dispatch dispatch;
  ErrorRenderer render_error;

  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::mutex mu;
  std::condition_variable drained;
  std::set<std::shared_ptr<Session>> sessions;

  void accept();
  void request_finished() {
    if (--in_flight == 0) {
      std::lock_guard lock(mu);
      drained.notify_all();
    }
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl& server) : stream_(std::move(socket)), server_(server) {}

  void start() {
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string();
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

  // Called on shutdown: an idle connection is closed now, a busy one after its
  // response has been written.
  void close_when_idle() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      if (!self->busy_) self->close();
    });
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(server_.body_limit);
    parser_->header_limit(16 * 1024);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset || ec == net::error::eof) {
      return close();
    }
    busy_ = true;
    ++server_.in_flight;
    if (ec) {
      // Malformed or oversized: answer in the envelope, then close, since the
      // rest of the stream can no longer be framed reliably.
      keep_alive_ = false;
      Request req;
      req.remote = remote_;
      if (parser_->is_header_done()) {
        const auto& h = parser_->get();
        req.method = std::string(h.method_string());
        req.target = std::string(h.target());
        if (auto it = h.find("x-request-id"); it != h.end()) req.headers["x-request-id"] = std::string(it->value());
      }
      Error err = ec == http::error::body_limit
                      ? Error("invalid_request",
                              "request body is larger than " + std::to_string(server_.body_limit) + " bytes",
                              Json::object(), 413)
                      : Error("invalid_request", std::string("malformed HTTP request: ") + ec.message());
      write(server_.render_error(req, err));
      return;
    }
    auto msg = parser_->release();
    keep_alive_ = msg.keep_alive() && !server_.stopping;
    Request req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    req.remote = remote_;
    for (const auto& f : msg) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [it, inserted] = req.headers.emplace(name, std::string(f.value()));
      if (!inserted) it->second += ", " + std::string(f.value());
    }
    req.body = std::move(msg.body());
    // No read timeout while the request is being handled: a long-poll may
    // legitimately keep the connection quiet for 45 seconds.
    stream_.expires_never();
    auto self = shared_from_this();
    server_.dispatch(std::move(req), [self](Response res) {
      net::post(self->stream_.get_executor(), [self, res = std::move(res)]() mutable { self->write(std::move(res)); });
    });
  }

  void write(Response res) {
    auto msg = std::make_shared<http::response<http::string_body>>();
    msg->version(11);
    msg->result(static_cast<unsigned>(res.status));
    msg->set(http::field::server, "scribe");
    if (!res.content_type.empty()) msg->set(http::field::content_type, res.content_type);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    bool keep = keep_alive_ && !closing_ && !server_.stopping;
    msg->keep_alive(keep);
    if (res.head) {
      msg->content_length(res.body.size());
    } else {
      msg->body() = std::move(res.body);
      msg->prepare_payload();
    }
    stream_.expires_after(kIdleTimeout);
    http::async_write(stream_, *msg, [self = shared_from_this(), msg, keep](beast::error_code ec, std::size_t) {
      self->busy_ = false;
      self->server_.request_finished();
      if (ec || !keep) return self->close();
      self->read();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    std::lock_guard lock(server_.mu);
    server_.sessions.erase(shared_from_this());
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string remote_;
  bool keep_alive_ = true;
  bool busy_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

void HttpServer::Impl::accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (!ec) {
      ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
      auto s = std::make_shared<Session>(std::move(socket), *this);
      {
        std::lock_guard lock(mu);
        sessions.insert(s);
      }
      s->start();
    }
    accept();
  });
}

HttpServer::HttpServer(std::string host, uint16_t port, int io_threads, std::size_t body_limit, Dispatch dispatch,
                       ErrorRenderer render_error)
    : impl_(std::make_unique<Impl>(body_limit, std::move(dispatch), std::move(render_error))) {
  impl_->io_threads = std::max(1, io_threads);
  tcp::endpoint ep(net::ip::make_address(host), port);
  impl_->acceptor = std::make_unique<tcp::acceptor>(net::make_strand(impl_->ioc));
  impl_->acceptor->open(ep.protocol());
  // Child processes (ffmpeg, yt-dlp) must not inherit the listener, or the
  // port stays open in them after shutdown.
  ::fcntl(impl_->acceptor->native_handle(), F_SETFD, FD_CLOEXEC);
  impl_->acceptor->set_option(net::socket_base::reuse_address(true));
  impl_->acceptor->bind(ep);
  impl_->acceptor->listen(net::socket_base::max_listen_connections);
}

HttpServer::~HttpServer() {
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
}

uint16_t HttpServer::port() const { return impl_->acceptor->local_endpoint().port(); }

void HttpServer::run() {
  impl_->accept();
  auto guard = net::make_work_guard(impl_->ioc);
  for (int i = 1; i < impl_->io_threads; ++i) impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  impl_->ioc.run();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
}

void HttpServer::shutdown(int grace_seconds) {
  if (impl_->stopping.exchange(true)) return;
  net::post(impl_->acceptor->get_executor(), [this] {
    beast::error_code ec;
    impl_->acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Session>> sessions;
  {
    std::lock_guard lock(impl_->mu);
    sessions.assign(impl_->sessions.begin(), impl_->sessions.end());
  }
  for (auto& s : sessions) s->close_when_idle();
  {
    std::unique_lock lock(impl_->mu);
    impl_->drained.wait_for(lock, std::chrono::seconds(grace_seconds), [&] { return impl_->in_flight == 0; });
  }
  log::info("http server drained", {{"in_flight", impl_->in_flight.load()}});
  impl_->ioc.stop();
}

int HttpServer::open_connections() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->sessions.size());
}

int HttpServer::in_flight() const { return impl_->in_flight.load(); }

}  // namespace scribe::api
