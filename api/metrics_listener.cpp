#include "api/metrics_listener.h"

#include "api/handlers/handlers.h"
#include "common/crypto.h"
#include "common/log.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

Response with_id(Response res, const std::string& request_id) {
  res.set_header("X-Request-Id", request_id);
  return res;
}

}  // namespace

MetricsListener::MetricsListener(const std::string& host, uint16_t port, Services& services) : services_(services) {
  server_ = std::make_unique<HttpServer>(
      host, port, 1, limits::kMaxJsonBodyBytes,
      [this](Request req, Responder respond) { handle(std::move(req), std::move(respond)); },
      [this](const Request&, const Error& err) {
        std::string request_id = "req_" + crypto::random_hex(12);
        return with_id(services_.render_error(request_id, err), request_id);
      });
}

MetricsListener::~MetricsListener() { stop(); }

void MetricsListener::start() {
  thread_ = std::thread([this] { server_->run(); });
}

void MetricsListener::stop() {
  if (!thread_.joinable()) return;
  server_->shutdown(1);
  thread_.join();
}

void MetricsListener::handle(Request req, Responder respond) {
  std::string request_id = "req_" + crypto::random_hex(12);
  std::string path = req.target.substr(0, req.target.find('?'));
  if (path != "/metrics") {
    respond(with_id(services_.render_error(request_id, Error("not_found", "no such endpoint: " + path +
                                                                              "; this listener serves GET /metrics")),
                    request_id));
    return;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    Response res = services_.render_error(
        request_id,
        Error("invalid_request", "method " + req.method + " is not allowed on /metrics", Json::object(), 405));
    res.set_header("Allow", "GET, HEAD");
    respond(with_id(std::move(res), request_id));
    return;
  }
  bool head = req.method == "HEAD";
  RequestContext ctx(std::move(req), request_id, services_);
  Response res;
  try {
    res = MetricsHandler::handle(ctx);
  } catch (const std::exception& err) {
    log::error("metrics scrape failed", {{"error", err.what()}});
    res = services_.render_error(request_id, Error("internal_error", "metrics could not be rendered; retry"));
  }
  ctx.release_db();
  res.head = head;
  respond(with_id(std::move(res), request_id));
}

}  // namespace scribe::api
