#pragma once
#include <memory>

#include "api/http.h"
#include "api/in_flight.h"
#include "api/router.h"
#include "api/services.h"
#include "common/error.h"
#include "common/thread_pool.h"

namespace scribe::api {

// The request pipeline shared by every endpoint, in this order:
//   request id -> absolute-form target (400 for another server's) -> CORS
//   (preflight answered here) -> route match (404/405) -> [worker thread]
//   authentication (in-memory refusals first, then the key's row) -> rate
//   limit -> scope -> idempotency ->
//   handler -> error envelope -> common headers, metrics and the access log.
class ApiApp {
 public:
  ApiApp(Services& services, int worker_threads);
  Router& router() { return router_; }
  void dispatch(Request req, Responder respond);
  // Renders an Error in the envelope with the request's id (used for errors
  // raised before a request reaches the pipeline, e.g. oversized bodies).
  Response render_error(const Request& req, const Error& err) const;

  // Streamed uploads (api_app_streams.cpp). A route whose body is streamed to
  // a file also has a precheck, run on a worker with the head only, that
  // refuses the request (by throwing scribe::Error) or says where the body
  // goes. The route's own handler then runs once the body is in the file.
  using StreamPrecheck = std::function<StreamPlan(RequestContext&)>;
  // `authenticated`: the precheck runs with the caller's principal, after
  // the same authentication, rate limit and scope checks as any request
  // (authorize); the route's own entry then leaves the rate limit out, so
  // the request counts once.
  void add_stream(const std::string& method, const std::string& pattern, StreamPrecheck precheck,
                  bool authenticated = false);
  bool streams(const std::string& method, const std::string& target) const;
  void prepare_stream(Request head, std::function<void(StreamPlan)> done);

 private:
  void run(std::shared_ptr<RequestContext> ctx, const Route& route, Responder respond, TimePoint started);
  // Authentication (in-memory refusals first, then the key's row), rate
  // limit and scope, as `route` asks for them; throws the refusal.
  void authorize(RequestContext& ctx, const Route& route);
  // The part of the pipeline after authentication, rate limit and scope:
  // idempotency, the handler (or async handler), the error envelope. `done`
  // gets the response exactly once.
  void execute(std::shared_ptr<RequestContext> ctx, const Route& route,
               std::function<void(const RequestContext&, Response)> done);
  // A REST request made on `principal`'s behalf from inside the server (the
  // MCP tools, Services::call): routed, scope-checked and executed like a
  // request from outside, but neither authenticated nor rate-limited again
  // (the MCP request that carries it was), nor logged as a request of its own.
  void call(const Principal& principal, Request req, Responder respond);
  Response failure_response(const RequestContext& ctx, const std::exception& err) const;
  // An absolute-form target naming this server becomes origin-form, its
  // authority the Host (RFC 9112 §3.2.2); any other authority is an error.
  std::optional<Error> to_origin_form(Request& req) const;
  Response error_response(const std::string& request_id, const Error& err) const;
  // Sets WWW-Authenticate on a 401 (oauth::bearer_challenge for the request's path).
  void challenge(const Request& req, Response& res) const;
  void finish(const Request& req, const std::string& request_id, const std::string& route, TimePoint started,
              Response res, const Responder& respond) const;

  Services& services_;
  Router router_;
  Router stream_router_;                             // patterns of streamed routes; handlers unused
  std::map<std::string, StreamPrecheck> prechecks_;  // by "METHOD pattern"
  // The web console's tokens' own budget (Principal::rate_bucket "console:").
  RateLimiter console_limiter_;
  // Long requests (Route::long_running) running per account.
  InFlight long_requests_;
  ThreadPool workers_;
};

// Builds the ApiApp's routes: every endpoint the server serves.
void register_routes(ApiApp& app);

}  // namespace scribe::api
