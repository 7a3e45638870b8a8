// Streamed request bodies: the ApiApp side of HttpServer::set_streaming. The
// precheck runs the same pipeline steps as any request (request id, route
// match, error envelope, access log) but on the head alone, so an upload that
// will be refused is refused before a byte of its body is read.
#include "api/api_app.h"
#include "api/openai/openai_errors.h"
#include "common/crypto.h"
#include "common/log.h"

namespace scribe::api {

void ApiApp::add_stream(const std::string& method, const std::string& pattern, StreamPrecheck precheck,
                        bool authenticated) {
  stream_router_.add(
      Route{.method = method, .pattern = pattern, .authenticated = authenticated, .rate_limited = authenticated});
  prechecks_[method + " " + pattern] = std::move(precheck);
}

bool ApiApp::streams(const std::string& method, const std::string& target) const {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  // An absolute-form target streams by its path; prepare_stream then refuses
  // one naming another server before its body is read.
  auto abs = parse_absolute_target(target);
  if (!parse_target(abs ? abs->origin_form : target, path, query)) return false;
  auto m = stream_router_.match(method, path);
  return m.route && m.route->method == method;
}

void ApiApp::prepare_stream(Request head, std::function<void(StreamPlan)> done) {
  // A refusal carries the same id in the header and the envelope; the
  // request that follows an accepted precheck gets its own, as any request.
  std::string request_id = "req_" + crypto::random_hex(12);
  if (auto err = to_origin_form(head)) {
    StreamPlan plan;
    plan.reject = error_response(request_id, *err);
    plan.reject->set_header("X-Request-Id", request_id);
    plan.reject->set_header("Access-Control-Allow-Origin", "*");
    return done(std::move(plan));
  }
  parse_target(head.target, head.path, head.query);
  auto m = stream_router_.match(head.method, head.path);
  auto ctx = std::make_shared<RequestContext>(std::move(head), request_id, services_);
  ctx->params = std::move(m.params);
  const StreamPrecheck* precheck = &prechecks_.at(m.route->method + " " + m.route->pattern);
  std::string pattern = m.route->pattern;
  const Route* route = m.route;
  workers_.post([this, ctx, precheck, route, pattern, done = std::move(done)] {
    StreamPlan plan;
    try {
      authorize(*ctx, *route);
      plan = (*precheck)(*ctx);
    } catch (const Error& err) {
      if (route->authenticated && err.http_status() == 401) services_.authenticator.record_failure(ctx->req);
      plan.reject = error_response(ctx->request_id, err);
    } catch (const std::exception& err) {
      log::error("upload precheck failed", {{"route", pattern}, {"error", err.what()}});
      plan.reject = error_response(ctx->request_id, Error("internal_error", "internal error; retry with backoff"));
    }
    ctx->release_db();
    if (plan.reject) {
      challenge(ctx->req, *plan.reject);
      plan.reject->set_header("X-Request-Id", ctx->request_id);
      plan.reject->set_header("Access-Control-Allow-Origin", "*");
      if (openai::is_openai_path(ctx->req.path)) openai::decorate_error(*plan.reject);
      log::info("request", {{"request_id", ctx->request_id},
                            {"method", ctx->req.method},
                            {"route", pattern},
                            {"status", plan.reject->status},
                            {"stage", "precheck"}});
    }
    done(std::move(plan));
  });
}

}  // namespace scribe::api
