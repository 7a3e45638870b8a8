#pragma once
#include <memory>

#include "api/http.h"
#include "api/router.h"
#include "api/services.h"
#include "common/error.h"
#include "common/thread_pool.h"

namespace scribe::api {

// The request pipeline shared by every endpoint, in this order:
//   request id -> CORS (preflight answered here) -> route match (404/405) ->
//   [worker thread] authentication -> rate limit -> scope -> idempotency ->
//   handler -> error envelope -> common headers, metrics and the access log.
class ApiApp {
 public:
  ApiApp(Services& services, int worker_threads);
  Router& router() { return router_; }
  void dispatch(Request req, Responder respond);
  // Renders an Error in the envelope with the request's id (used for errors
  // raised before a request reaches the pipeline, e.g. oversized bodies).
  Response render_error(const Request& req, const Error& err) const;

 private:
  void run(std::shared_ptr<RequestContext> ctx, const Route& route, Responder respond, TimePoint started);
  Response error_response(const std::string& request_id, const Error& err) const;
  void finish(const Request& req, const std::string& request_id, const std::string& route, TimePoint started,
              Response res, const Responder& respond) const;

  Services& services_;
  Router router_;
  ThreadPool workers_;
};

// Builds the ApiApp's routes: every endpoint the server serves.
void register_routes(ApiApp& app);

}  // namespace scribe::api
