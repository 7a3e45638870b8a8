#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http.h"
#include "common/error.h"

namespace scribe::api {

// The HTTP/1.1 listener (Boost.Beast). I/O threads only parse and write: each
// parsed request is handed to `dispatch` together with a Responder, and the
// response may come back later from any thread. A request that is waiting
// (a long-poll) therefore holds no thread and no database connection, only
// its socket and a few hundred bytes.
class HttpServer {
 public:
  using Dispatch = std::function<void(Request, Responder)>;
  // Renders transport-level failures (oversized or malformed requests) in the
  // API's error envelope.
  using ErrorRenderer = std::function<Response(const Request&, const Error&)>;

  HttpServer(std::string host, uint16_t port, int io_threads, std::size_t body_limit, Dispatch dispatch,
             ErrorRenderer render_error);
  ~HttpServer();

  // Streamed request bodies (uploads up to 1 GB). `filter(method, target)`
  // picks the requests whose body goes to a file instead of memory; for
  // those, `prepare(head, done)` decides from the head alone, off the I/O
  // thread, whether and where the body is written (done may run on any
  // thread). The request then reaches `dispatch` with Request::body_file set,
  // also when the body ended early (body_state "interrupted"), so partial
  // bytes can be kept; its answer is written whenever the socket still takes
  // it. Set before run().
  using StreamFilter = std::function<bool(const std::string& method, const std::string& target)>;
  using StreamPrepare = std::function<void(Request head, std::function<void(StreamPlan)> done)>;
  void set_streaming(StreamFilter filter, StreamPrepare prepare);

  uint16_t port() const;
  // Serves until shutdown() has finished draining. Blocks the caller.
  void run();
  // Stops accepting, closes idle keep-alive connections, lets in-flight
  // requests finish and closes WebSocket connections (each handler's
  // on_shutdown, then close 1001), waiting up to `grace_seconds` for both,
  // then returns from run(). Connections still open then end when the
  // server is destroyed (on_closed runs there).
  void shutdown(int grace_seconds = 30);

  int in_flight() const;
  // Upgraded WebSocket connections still open (Request::websocket_upgrade,
  // api/websocket.h); shutdown() closes them with 1001 and waits for them
  // (up to the same grace) as for requests in flight.
  int websockets() const;

  struct Impl;  // public so the session class in the .cpp can reach it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace scribe::api
