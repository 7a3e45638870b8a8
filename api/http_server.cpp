#include "api/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <limits>

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "api/websocket_server.h"
#include "common/log.h"
#include "common/text.h"
#include "domain/limits.h"

namespace scribe::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr auto kIdleTimeout = std::chrono::seconds(75);
// After an answer that closes the connection, the rest of what the client
// sent (an oversized head, an unread body) is read and dropped for this long,
// at most kLingerBytes, before the socket closes: closing with unread data
// makes the kernel send a reset, which can destroy the answer in flight
// before the client reads it.
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr std::size_t kLingerBytes = 1 << 20;

// Which limit a head the parser gave up on broke. The parser takes the
// request line as soon as it has ended (and then the fields): a request line
// that never ended within the parser's limit is a target too long (414), and
// so is a parsed one whose target is over the target limit; anything else is
// a header section too long (431).
bool request_line_too_long(const http::request_header<>& parsed) {
  return parsed.target().empty() || parsed.target().size() > limits::kMaxRequestTargetBytes;
}

// The size of the header fields as the limit counts them ("name: value\r\n").
std::size_t header_fields_bytes(const http::request_header<>& h) {
  std::size_t n = 0;
  for (const auto& f : h) n += f.name_string().size() + 2 + f.value().size() + 2;
  return n;
}

Error target_too_long() {
  return Error("invalid_request",
               "the request target is longer than " + std::to_string(limits::kMaxRequestTargetBytes) + " bytes",
               {{"field", "target"}}, 414);
}

Error header_fields_too_large() {
  return Error(
      "invalid_request",
      "the request header fields are larger than " + std::to_string(limits::kMaxHeaderFieldsBytes) + " bytes together",
      {{"field", "headers"}}, 431);
}
}  // namespace

class Session;

// The one answer a request owes its session. The callbacks given to the
// application hold the slot, not the session; the first call moves the
// session out onto its executor, and the server's destructor empties every
// slot still owed.
struct AnswerSlot {
  std::mutex mu;
  std::shared_ptr<Session> session;
};

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
  HttpServer::StreamFilter stream_filter;
  HttpServer::StreamPrepare stream_prepare;

  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};
  std::mutex mu;
  std::condition_variable drained;
  // Upgraded connections: counted apart from in_flight, drained at shutdown
  // too. After the io_context, so that it goes first.
  WebSocketHub websockets{[this] {
    std::lock_guard lock(mu);
    drained.notify_all();
  }};
  std::set<std::shared_ptr<Session>> sessions;
  // Every answer still owed (Session::answer_once), also of sessions that
  // have closed and left `sessions`: the destructor empties them all before
  // the io_context goes, since a slot keeps its session, and a session's
  // stream, alive on whatever thread ends up dropping the responder.
  std::mutex slots_mu;
  std::vector<std::weak_ptr<AnswerSlot>> slots;

  void keep_slot(const std::shared_ptr<AnswerSlot>& slot) {
    std::lock_guard lock(slots_mu);
    // Answered slots expire; dropping them when the list has doubled keeps
    // it proportional to the answers owed, at a constant cost per request.
    if (slots.size() >= 2 * slots_live + 64) {
      std::erase_if(slots, [](const std::weak_ptr<AnswerSlot>& w) { return w.expired(); });
      slots_live = slots.size();
    }
    slots.push_back(slot);
  }
  std::size_t slots_live = 0;

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
  ~Session() {
    if (fd_ >= 0) ::close(fd_);
  }

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
  // The head is read first; the body then goes either into a string (every
  // JSON route, capped at body_limit) or, for the upload routes the server
  // was told to stream, into a file in 64 KiB chunks.
  void read() {
    header_parser_.emplace();
    // The cap is checked below once the route is known (uploads have their own).
    header_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    header_parser_->header_limit(static_cast<std::uint32_t>(
        limits::kMaxRequestTargetBytes + limits::kMaxHeaderFieldsBytes + limits::kRequestLineSlackBytes));
    stream_.expires_after(kIdleTimeout);
    http::async_read_header(stream_, buffer_, *header_parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  static bool is_quiet_end(const beast::error_code& ec) {
    return ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
           ec == net::error::connection_reset || ec == net::error::eof;
  }

  // Malformed or oversized: answer in the envelope, then close, since the
  // rest of the stream can no longer be framed reliably.
  void fail(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return fail(Error("invalid_request",
                        "request body is larger than " + std::to_string(server_.body_limit) + " bytes", Json::object(),
                        413));
    if (ec == http::error::header_limit)
      return fail(request_line_too_long(header_parser_->get()) ? target_too_long() : header_fields_too_large());
    fail(Error("invalid_request", std::string("malformed HTTP request: ") + ec.message()));
  }

  void fail(const Error& err) {
    busy_ = true;
    ++server_.in_flight;
    keep_alive_ = false;
    write(server_.render_error(head_, err));
  }

  void on_header(beast::error_code ec) {
    head_ = Request{};
    head_.remote = remote_;
    if (header_parser_->is_header_done()) {
      const auto& h = header_parser_->get();
      head_.method = std::string(h.method_string());
      head_.target = std::string(h.target());
      for (const auto& f : h) {
        const auto field = f.name_string();
        std::string name = to_lower({field.data(), field.size()});
        auto [it, inserted] = head_.headers.emplace(name, std::string(f.value()));
        if (!inserted) it->second += ", " + std::string(f.value());
      }
    }
    if (is_quiet_end(ec)) return close();
    if (ec) return fail(ec);
    if (head_.target.size() > limits::kMaxRequestTargetBytes) return fail(target_too_long());
    if (header_fields_bytes(header_parser_->get()) > limits::kMaxHeaderFieldsBytes)
      return fail(header_fields_too_large());
    keep_alive_ = header_parser_->get().keep_alive() && !server_.stopping;
    if (server_.stream_filter && server_.stream_filter(head_.method, head_.target)) return prepare_stream();
    if (auto cl = header_parser_->content_length(); cl && *cl > server_.body_limit)
      return fail(http::error::body_limit);
    parser_.emplace(std::move(*header_parser_));
    parser_->body_limit(server_.body_limit);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (is_quiet_end(ec)) return close();
    if (ec) return fail(ec);
    const HandshakeCheck handshake = check_handshake(head_, parser_->get().version());
    if (handshake.error) {
      Response res = server_.render_error(head_, *handshake.error);
      if (handshake.error->http_status() == 426) res.set_header("Sec-WebSocket-Version", "13");
      busy_ = true;
      ++server_.in_flight;
      keep_alive_ = false;
      return write(std::move(res));
    }
    // Refused (answered as HTTP), the connection closes: the client meant to
    // leave HTTP behind.
    websocket_request_ = handshake.upgrade;
    if (websocket_request_) keep_alive_ = false;
    busy_ = true;
    ++server_.in_flight;
    Request req = std::move(head_);
    req.websocket_upgrade = websocket_request_;
    req.body = std::move(parser_->get().body());
    dispatch(std::move(req));
  }

  // The callbacks given to the application (the responder, the stream
  // plan's `done`) are copied around and destroyed on worker threads, often
  // after the server is gone. So none of them owns the session: they share
  // one slot, the first call moves the session out onto its own executor,
  // and the server's destructor empties the slots of answers still owed.
  template <class T, class OnAnswer>
  std::function<void(T)> answer_once(OnAnswer on_answer) {
    auto slot = std::make_shared<AnswerSlot>();
    slot->session = shared_from_this();
    server_.keep_slot(slot);
    return [slot, on_answer](T value) {
      // Posting under the slot's lock: the destructor either empties the slot
      // first, or finds the handler already queued in the live io_context.
      std::lock_guard lock(slot->mu);
      if (!slot->session) return;
      auto self = std::move(slot->session);
      auto executor = self->stream_.get_executor();
      net::post(executor, [self = std::move(self), on_answer, value = std::move(value)]() mutable {
        on_answer(*self, std::move(value));
      });
    };
  }

  void dispatch(Request req) {
    // No read timeout while the request is being handled: a long-poll may
    // legitimately keep the connection quiet for 45 seconds.
    stream_.expires_never();
    server_.dispatch(std::move(req), answer_once<Response>([](Session& s, Response res) { s.write(std::move(res)); }));
  }

  // --- streamed bodies -----------------------------------------------------
  void prepare_stream() {
    busy_ = true;
    stream_.expires_never();
    server_.stream_prepare(head_,
                           answer_once<StreamPlan>([](Session& s, StreamPlan plan) { s.on_plan(std::move(plan)); }));
  }

  void on_plan(StreamPlan plan) {
    ++server_.in_flight;
    if (plan.reject) {
      keep_alive_ = false;
      return write(std::move(*plan.reject));
    }
    plan_ = std::move(plan);
    received_ = 0;
    // A sink takes the body itself (it opens what it writes to).
    if (!plan_.sink) {
      int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (plan_.append ? O_APPEND : O_TRUNC);
      fd_ = ::open(plan_.file.c_str(), flags, 0600);
    }
    if (!plan_.sink && fd_ < 0) {
      // The handler still runs (and answers 500), so it can release what its
      // precheck took.
      log::error("cannot open upload staging file", {{"path", plan_.file}, {"errno", errno}});
      return end_stream("failed");
    }
    body_parser_.emplace(std::move(*header_parser_));
    body_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    auto expect = head_.header("expect");
    if (expect && strcasecmp(expect->c_str(), "100-continue") == 0) {
      // The client waits for this before sending the body (curl does for
      // large files); it comes only once the upload is known to be accepted.
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code ec, std::size_t) {
        if (ec) return self->end_stream("interrupted");
        self->read_chunk();
      });
      return;
    }
    read_chunk();
  }

  void read_chunk() {
    if (body_parser_->is_done()) return end_stream("complete");
    // Allocated by the first upload on the connection: every other
    // connection (thousands of idle long-polls) would otherwise carry 64 KiB.
    if (chunk_.empty()) chunk_.resize(kChunkBytes);
    body_parser_->get().body().data = chunk_.data();
    body_parser_->get().body().size = chunk_.size();
    body_parser_->get().body().more = true;
    stream_.expires_after(kIdleTimeout);
    http::async_read_some(stream_, buffer_, *body_parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_chunk(ec); });
  }

  // Chunks are written with a plain write(2) on the I/O thread: 64 KiB to the
  // page cache takes microseconds, so other connections on this thread are
  // not held up noticeably, and no copy to another thread is needed.
  void on_chunk(beast::error_code ec) {
    if (ec == http::error::need_buffer) ec = {};
    std::size_t got = chunk_.size() - body_parser_->get().body().size;
    int64_t room = plan_.max_bytes - received_;
    std::size_t keep =
        static_cast<std::size_t>(std::min<int64_t>(static_cast<int64_t>(got), std::max<int64_t>(room, 0)));
    const bool written = plan_.sink ? plan_.sink->write(chunk_.data(), keep) : write_all(chunk_.data(), keep);
    if (!written) return end_stream("interrupted");
    received_ += static_cast<int64_t>(keep);
    if (got > keep) return end_stream("too_large");
    if (ec) return end_stream("interrupted");
    read_chunk();
  }

  bool write_all(const char* data, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        log::error("upload staging write failed", {{"path", plan_.file}, {"errno", errno}});
        return false;
      }
      data += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  // Hands the streamed request to the application in every case, so that an
  // interrupted tus PATCH still records the bytes that did arrive, and
  // writes its answer in every case too: a body that ended early often means
  // the client half-closed (shutdown(SHUT_WR)) and is still reading. If the
  // client is gone altogether, the write fails and the socket closes.
  void end_stream(const char* state) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    Request req = std::move(head_);
    req.body_file = plan_.file;
    req.body_bytes = received_;
    req.body_state = state;
    req.body_sink = std::exchange(plan_.sink, nullptr);
    // Unless the body was read to its end, the connection cannot be reused.
    if (req.body_state != "complete") keep_alive_ = false;
    dispatch(std::move(req));
  }

  void write(Response res) {
    if (res.websocket) return upgrade(std::move(res));
    if (res.stream && !res.head) return write_stream(std::move(res));
    if (res.file && !res.head) return write_file(std::move(res));
    auto msg = std::make_shared<http::response<http::string_body>>();
    msg->version(11);
    msg->result(static_cast<unsigned>(res.status));
    msg->set(http::field::server, "scribe");
    if (!res.content_type.empty()) msg->set(http::field::content_type, res.content_type);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    bool keep = keep_alive_ && !closing_ && !server_.stopping;
    msg->keep_alive(keep);
    if (res.head) {
      msg->content_length(res.file ? res.file->length() : res.body.size());
    } else {
      msg->body() = std::move(res.body);
      msg->prepare_payload();
    }
    stream_.expires_after(kIdleTimeout);
    http::async_write(stream_, *msg, [self = shared_from_this(), msg, keep](beast::error_code ec, std::size_t) {
      self->busy_ = false;
      self->server_.request_finished();
      if (ec) return self->close();
      if (!keep) return self->linger();
      self->read();
    });
  }

  // A streamed body (Response::stream): the head with chunked transfer
  // coding at once, then each piece as one chunk the moment the producer
  // pushes it, then the last chunk. No timeout while waiting for pieces (the
  // producer bounds its own time, as a long-poll does); each write has the
  // idle timeout. A failed write closes the connection and tells the producer.
  void write_stream(Response res) {
    auto msg = std::make_shared<http::response<http::empty_body>>();
    msg->version(11);
    msg->result(static_cast<unsigned>(res.status));
    msg->set(http::field::server, "scribe");
    if (!res.content_type.empty()) msg->set(http::field::content_type, res.content_type);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    const bool keep = keep_alive_ && !closing_ && !server_.stopping;
    msg->keep_alive(keep);
    msg->chunked(true);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*msg);
    auto body = res.stream;
    streaming_ = body;  // close() tells the producer the client is gone
    stream_.expires_after(kIdleTimeout);
    http::async_write_header(stream_, *sr,
                             [self = shared_from_this(), msg, sr, body, keep](beast::error_code ec, std::size_t) {
                               if (ec) return self->end_stream(body, ec, keep);
                               self->next_chunk(body, keep);
                             });
  }

  void next_chunk(std::shared_ptr<ChunkStream> body, bool keep) {
    stream_.expires_never();
    body->pull([self = shared_from_this(), body, keep](std::optional<std::string> piece) {
      auto executor = self->stream_.get_executor();
      net::post(executor, [self, body, keep, piece = std::move(piece)]() mutable {
        self->stream_.expires_after(kIdleTimeout);
        if (!piece) {
          net::async_write(self->stream_, http::make_chunk_last(),
                           [self, body, keep](beast::error_code ec, std::size_t) { self->end_stream(body, ec, keep); });
          return;
        }
        if (piece->empty()) return self->next_chunk(body, keep);  // an empty chunk would end the body
        auto data = std::make_shared<std::string>(std::move(*piece));
        net::async_write(self->stream_, http::make_chunk(net::buffer(*data)),
                         [self, body, keep, data](beast::error_code ec, std::size_t) {
                           if (ec) return self->end_stream(body, ec, keep);
                           self->next_chunk(body, keep);
                         });
      });
    });
  }

  void end_stream(const std::shared_ptr<ChunkStream>& body, beast::error_code ec, bool keep) {
    busy_ = false;
    streaming_.reset();
    server_.request_finished();
    if (ec) {
      body->mark_gone();
      return close();
    }
    // A stream can outlast the start of a shutdown: decide keep-alive again.
    if (!keep || closing_ || server_.stopping) return linger();
    read();
  }

  // A file's bytes (Response::file): the head with its Content-Length, then
  // the selected range read kChunkBytes at a time into the session's one
  // buffer, each read after the previous write has gone to the socket, so a
  // slow reader holds the server's writes, not the file in memory. The reads
  // are pread(2) on the I/O thread, like the upload writes: a clip file was
  // just written and is in the page cache, where 64 KiB take microseconds.
  // The file (and the handler's hold on it) is dropped as soon as the body
  // is out or the connection fails, before the connection is reused or closed.
  void write_file(Response res) {
    auto msg = std::make_shared<http::response<http::empty_body>>();
    msg->version(11);
    msg->result(static_cast<unsigned>(res.status));
    msg->set(http::field::server, "scribe");
    if (!res.content_type.empty()) msg->set(http::field::content_type, res.content_type);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    const bool keep = keep_alive_ && !closing_ && !server_.stopping;
    msg->keep_alive(keep);
    msg->content_length(res.file->length());
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*msg);
    sending_ = std::move(res.file);
    sent_ = 0;
    stream_.expires_after(kIdleTimeout);
    http::async_write_header(stream_, *sr,
                             [self = shared_from_this(), msg, sr, keep](beast::error_code ec, std::size_t) {
                               if (ec) return self->end_file(ec, keep);
                               self->next_file_chunk(keep);
                             });
  }

  void next_file_chunk(bool keep) {
    // The connection failed meanwhile (close() dropped the file).
    if (!sending_ || closed_) return end_file(net::error::operation_aborted, keep);
    if (sent_ == sending_->length()) return end_file({}, keep);
    if (chunk_.empty()) chunk_.resize(kChunkBytes);
    const long got = sending_->read(sent_, chunk_.data(), chunk_.size());
    if (got <= 0) {
      // The head promised more bytes than the file now has (or a read
      // failed): the body cannot be completed, so the connection closes and
      // the client sees a short body rather than a wrong one.
      log::error("clip file read failed while sending",
                 {{"sent", sent_}, {"length", sending_->length()}, {"errno", got < 0 ? errno : 0}});
      return end_file(net::error::broken_pipe, keep);
    }
    stream_.expires_after(kIdleTimeout);
    net::async_write(stream_, net::buffer(chunk_.data(), static_cast<std::size_t>(got)),
                     [self = shared_from_this(), keep](beast::error_code ec, std::size_t n) {
                       if (ec) return self->end_file(ec, keep);
                       self->sent_ += n;
                       self->next_file_chunk(keep);
                     });
  }

  void end_file(beast::error_code ec, bool keep) {
    sending_.reset();
    busy_ = false;
    server_.request_finished();
    if (ec) return close();
    if (!keep || closing_ || server_.stopping) return linger();
    read();
  }

  // A route accepted the upgrade: the connection leaves this session for
  // the WebSocket hub, which writes the 101 and serves the socket. The
  // request counts as finished; the connection counts among the hub's.
  void upgrade(Response res) {
    if (!websocket_request_) {
      log::error("a WebSocket acceptance answered a request that is not an upgrade", {{"remote", remote_}});
      keep_alive_ = false;
      return write(server_.render_error(head_, Error("internal_error", "internal error; retry with backoff")));
    }
    closed_ = true;  // the stream is the hub's now: close() must not touch it
    server_.websockets.start(std::move(stream_), parser_->release(), std::move(res.websocket), std::move(res.headers),
                             remote_, beast::buffers_to_string(buffer_.data()));
    busy_ = false;
    server_.request_finished();
    std::lock_guard lock(server_.mu);
    server_.sessions.erase(shared_from_this());
  }

  // Closes after an answer: our side first (the client sees the end of the
  // answer), then what the client still sends is drained until it closes
  // too, kLingerTimeout passes or kLingerBytes arrive.
  void linger() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec || closed_) return close();
    if (chunk_.empty()) chunk_.resize(kChunkBytes);
    lingered_ = 0;
    stream_.expires_after(kLingerTimeout);
    drain();
  }

  void drain() {
    stream_.async_read_some(net::buffer(chunk_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->lingered_ += n;
      if (ec || self->lingered_ > kLingerBytes) return self->close();
      self->drain();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    // A pending pull holds this session; dropping it lets both go.
    if (auto body = std::exchange(streaming_, nullptr)) body->mark_gone();
    sending_.reset();  // a file being sent, and its hold
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    std::lock_guard lock(server_.mu);
    server_.sessions.erase(shared_from_this());
  }

  beast::tcp_stream stream_;
  HttpServer::Impl& server_;
  std::shared_ptr<ChunkStream> streaming_;  // the body being streamed, if any
  std::shared_ptr<FileBody> sending_;       // the file being sent, if any
  uint64_t sent_ = 0;                       // bytes of it written so far
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> header_parser_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::request_parser<http::buffer_body>> body_parser_;
  Request head_;
  StreamPlan plan_;
  static constexpr std::size_t kChunkBytes = 64 * 1024;
  std::vector<char> chunk_;
  int fd_ = -1;
  int64_t received_ = 0;
  std::size_t lingered_ = 0;
  std::string remote_;
  bool keep_alive_ = true;
  bool websocket_request_ = false;
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
  // WebSocket connections still open (the grace ran out) end here, their
  // on_closed included, while their sockets' io_context exists.
  impl_->websockets.abandon();
  // Posting under a slot's lock (answer_once): each answer still owed is
  // either queued in the io_context already, and destroyed with it, or
  // finds its slot empty and is dropped. The sessions die here, while the
  // io_context their sockets and strands belong to still exists, not later
  // on whichever worker thread drops the callback.
  std::vector<std::shared_ptr<Session>> owed;
  {
    std::lock_guard lock(impl_->slots_mu);
    for (const auto& w : impl_->slots)
      if (auto slot = w.lock()) {
        std::lock_guard slot_lock(slot->mu);
        if (slot->session) owed.push_back(std::move(slot->session));
      }
  }
  owed.clear();
  std::lock_guard lock(impl_->mu);
  impl_->sessions.clear();
}

void HttpServer::set_streaming(StreamFilter filter, StreamPrepare prepare) {
  impl_->stream_filter = std::move(filter);
  impl_->stream_prepare = std::move(prepare);
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
  impl_->websockets.going_away();
  {
    std::unique_lock lock(impl_->mu);
    impl_->drained.wait_for(lock, std::chrono::seconds(grace_seconds),
                            [&] { return impl_->in_flight == 0 && impl_->websockets.open() == 0; });
  }
  log::info("http server drained", {{"in_flight", impl_->in_flight.load()}, {"websockets", impl_->websockets.open()}});
  impl_->ioc.stop();
}

int HttpServer::in_flight() const { return impl_->in_flight.load(); }

int HttpServer::websockets() const { return impl_->websockets.open(); }

}  // namespace scribe::api
