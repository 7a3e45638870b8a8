#include "api/api_app.h"

#include "api/console/console.h"
#include "api/console/console_files.h"
#include "api/idempotency.h"
#include "api/metrics.h"
#include "api/oauth/protected_resource.h"
#include "api/openai/openai_errors.h"
#include "api/realtime/assemblyai_wire.h"
#include "common/crypto.h"
#include "common/log.h"
#include "domain/limits.h"

namespace scribe::api {
namespace {

constexpr const char* kAllowHeaders =
    "Authorization, Content-Type, Accept, Idempotency-Key, X-Request-Id, Tus-Resumable, Upload-Length, Upload-Offset, "
    "Upload-Metadata, Upload-Defer-Length, Upload-Concat, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
    "Last-Event-ID";
constexpr const char* kExposeHeaders =
    "X-Request-Id, Retry-After, Location, Content-Disposition, Idempotent-Replayed, Tus-Resumable, Tus-Version, "
    "Tus-Extension, Tus-Max-Size, Upload-Offset, Upload-Length, Upload-Expires, x-service-segment-count, "
    "x-service-cue-count, x-service-cue-source, x-service-cue-mode, Mcp-Session-Id, WWW-Authenticate, "
    "x-should-retry, x-scribe-transcription-id";

// Accepts a caller's X-Request-Id when it is short and plain; otherwise mints one.
std::string request_id_for(const Request& req) {
  if (auto given = req.header("x-request-id")) {
    bool ok = !given->empty() && given->size() <= 128;
    for (char c : *given)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) ok = false;
    if (ok) return *given;
  }
  return "req_" + crypto::random_hex(12);
}

bool is_api_path(const std::string& path) {
  return path.rfind("/api/v1", 0) == 0 || path == "/mcp" || path.rfind("/mcp/", 0) == 0 ||
         path.rfind("/uploads/", 0) == 0 || path.rfind("/.well-known/mcp/", 0) == 0 ||
         path.rfind("/.well-known/oauth-protected-resource", 0) == 0 || openai::is_openai_path(path) ||
         // What OAuth clients in a browser call directly; not the /oauth pages.
         path == "/.well-known/oauth-authorization-server" || path == "/oauth/token" || path == "/oauth/register" ||
         path == "/oauth/revoke";
}

}  // namespace

ApiApp::ApiApp(Services& services, int worker_threads)
    : services_(services),
      console_limiter_(services.config.console_rate_limit_per_minute),
      long_requests_(limits::kLongRequestsInFlightPerAccount),
      workers_(worker_threads) {
  services_.workers = &workers_;
  services_.call = [this](const Principal& principal, Request req, Responder respond) {
    call(principal, std::move(req), std::move(respond));
  };
  services_.render_error = [this](const std::string& request_id, const Error& err) {
    return error_response(request_id, err);
  };
}

Response ApiApp::error_response(const std::string& request_id, const Error& err) const {
  Json body = err.extras();
  body["code"] = err.code();
  body["message"] = err.message();
  body["request_id"] = request_id;
  body["doc_url"] = services_.config.public_url + "/docs/errors#" + err.code();
  Response res = Response::json(err.http_status(), {{"error", body}});
  if (err.extras().contains("retry_after") && err.extras()["retry_after"].is_number_integer())
    res.set_header("Retry-After", std::to_string(err.extras()["retry_after"].get<int64_t>()));
  return res;
}

void ApiApp::challenge(const Request& req, Response& res) const {
  // RFC 6750 3 and RFC 9728 5.1: a 401 names the scheme and where to learn
  // how to get a token for this resource (the /mcp document on /mcp).
  // A 401 whose handler named its own scheme keeps it (the token
  // endpoint's invalid_client).
  if (res.status != 401 || res.header("WWW-Authenticate")) return;
  const std::string path = req.path.empty() ? req.target.substr(0, req.target.find('?')) : req.path;
  res.set_header("WWW-Authenticate",
                 oauth::bearer_challenge(services_.config.public_url, path,
                                         oauth::presents_bearer_token(req.header("authorization").value_or(""))));
}

std::optional<Error> ApiApp::to_origin_form(Request& req) const {
  auto abs = parse_absolute_target(req.target);
  if (!abs) return std::nullopt;
  // This server is not a proxy: it answers for its public URL's authority and
  // for the address it listens on, nothing else.
  bool own = false;
  if (abs->valid) {
    auto pub = parse_absolute_target(services_.config.public_url);
    if (pub && pub->valid && pub->scheme == abs->scheme && pub->host == abs->host && pub->port == abs->port) own = true;
    std::string listen = services_.config.listen_host;
    if (listen.find(':') != std::string::npos) listen = "[" + listen + "]";
    if (abs->scheme == "http" && abs->host == listen && abs->port == services_.config.listen_port) own = true;
  }
  if (!own)
    return Error("invalid_request",
                 "the request target names " + (abs->authority.empty() ? std::string("no host") : abs->authority) +
                     ", which is not this server; send the path only (origin-form), this server is not a proxy",
                 {{"field", "target"}});
  req.target = abs->origin_form;
  req.headers["host"] = abs->authority;
  return std::nullopt;
}

Response ApiApp::render_error(const Request& req, const Error& err) const {
  std::string id = request_id_for(req);
  Response res = error_response(id, err);
  if (openai::is_openai_path(req.target.substr(0, req.target.find('?')))) openai::decorate_error(res);
  if (req.method == "GET" && realtime::is_assemblyai_path(req.target.substr(0, req.target.find('?'))))
    realtime::decorate_error(res);
  challenge(req, res);
  res.set_header("X-Request-Id", id);
  res.set_header("Access-Control-Allow-Origin", "*");
  res.set_header("Access-Control-Expose-Headers", kExposeHeaders);
  return res;
}

void ApiApp::finish(const Request& req, const std::string& request_id, const std::string& route, TimePoint started,
                    Response res, const Responder& respond) const {
  res.set_header("X-Request-Id", request_id);
  challenge(req, res);
  if (is_api_path(req.path)) {
    res.set_header("Access-Control-Allow-Origin", "*");
    res.set_header("Access-Control-Expose-Headers", kExposeHeaders);
  }
  // OpenAI's clients read type and param, and x-should-retry (api/openai/openai_errors.h).
  if (openai::is_openai_path(req.path)) openai::decorate_error(res);
  // The web console's pages, assets and errors alike (api/console/console.h).
  if (console::is_console_path(req.path)) console::add_security_headers(res);
  // (Only what its SDK calls: other methods get the envelope and its 405.)
  if (req.method == "GET" && realtime::is_assemblyai_path(req.path)) realtime::decorate_error(res);
  double seconds = std::chrono::duration<double>(now() - started).count();
  Metrics::instance().observe(route, req.method, res.status, seconds);
  res.head = req.method == "HEAD";
  Json fields = {{"request_id", request_id},
                 {"method", req.method},
                 {"route", route},
                 {"status", res.status},
                 {"duration_ms", seconds * 1000.0}};
  // A 5xx is the service's fault: an operator must see it at error level.
  if (res.status >= 500) log::error("request", fields);
  else log::info("request", fields);
  respond(std::move(res));
}

void ApiApp::dispatch(Request req, Responder respond) {
  TimePoint started = now();
  std::string request_id = request_id_for(req);
  if (auto err = to_origin_form(req)) {
    finish(req, request_id, "unmatched", started, error_response(request_id, *err), respond);
    return;
  }
  if (!parse_target(req.target, req.path, req.query)) {
    finish(req, request_id, "unmatched", started,
           error_response(request_id, Error::invalid("path", "the request target is not valid percent-encoding")),
           respond);
    return;
  }
  if (req.method == "OPTIONS" && is_api_path(req.path)) {
    // CORS preflight: any origin, no credentials (Bearer only).
    Response res;
    res.status = 204;
    res.content_type.clear();
    res.set_header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", kAllowHeaders);
    res.set_header("Access-Control-Max-Age", "86400");
    if (req.path.rfind("/api/v1/uploads/tus/files", 0) == 0) {
      // tus discovery (tus_handlers.cpp): OPTIONS needs no Tus-Resumable.
      res.set_header("Tus-Resumable", "1.0.0");
      res.set_header("Tus-Version", "1.0.0");
      res.set_header("Tus-Extension", "creation,termination,expiration");
      res.set_header("Tus-Max-Size", std::to_string(limits::kMaxUploadBytes));
    }
    finish(req, request_id, "preflight", started, std::move(res), respond);
    return;
  }
  // AssemblyAI's SDK sends its key without a scheme (and, from a base URL
  // with a trailing slash, to //v3/token).
  if (realtime::is_assemblyai_path(req.path)) {
    realtime::normalize_credential(req);
    if (req.path.rfind("//", 0) == 0) req.path.erase(0, 1);
  }
  auto match = router_.match(req.method, req.path);
  if (!match.route) {
    Error err =
        match.allowed_methods.empty()
            ? Error("not_found", "no such endpoint: " + req.method + " " + req.path)
            : Error("invalid_request", "method " + req.method + " is not allowed on " + req.path, Json::object(), 405);
    Response res = error_response(request_id, err);
    if (!match.allowed_methods.empty()) {
      std::string allow;
      for (const auto& m : match.allowed_methods) {
        allow += (allow.empty() ? "" : ", ") + m;
        if (m == "GET") allow += ", HEAD";
      }
      res.set_header("Allow", allow);
    }
    finish(req, request_id, "unmatched", started, std::move(res), respond);
    return;
  }
  const Route& route = *match.route;
  auto ctx = std::make_shared<RequestContext>(std::move(req), std::move(request_id), services_);
  ctx->params = std::move(match.params);
  workers_.post([this, ctx, &route, respond = std::move(respond), started]() mutable {
    run(std::move(ctx), route, std::move(respond), started);
  });
}

void ApiApp::authorize(RequestContext& ctx, const Route& route) {
  if (!route.authenticated) return;
  // A route whose handler checks the key in its own statement may start
  // from the cache (no round trip); every other route reads the key now.
  if (route.handler_checks_key) ctx.principal = services_.authenticator.cached(ctx.req);
  auto authenticate = [&] {
    // Refusals that need no database come before a connection is leased.
    services_.authenticator.screen(ctx.req);
    pqxx::nontransaction txn(ctx.db());
    ctx.principal = services_.authenticator.authenticate(txn, ctx.req);
  };
  if (!ctx.principal) authenticate();
  // An OAuth token is accepted only by the resource it was issued for
  // (RFC 8707): {base} on the REST API, {base}/mcp on /mcp.
  oauth::check_audience(*ctx.principal, services_.config.public_url, ctx.req.path);
  if (route.rate_limited) {
    // The web console's sign-in has a budget of its own (limits.h), apart
    // from the account's API keys and its other apps.
    const bool is_console = ctx.principal->kind == Principal::Kind::OAuth && ctx.principal->first_party;
    const RateLimiter& limiter = is_console ? console_limiter_ : services_.limiter;
    int64_t wait = limiter.take(ctx.db(), ctx.principal->rate_bucket());
    // A refusal is only for a valid credential: a revoked one is 401, never 429.
    if (wait > 0 && !ctx.principal->verified) authenticate();
    if (wait > 0)
      throw Error("rate_limited",
                  "more than " + std::to_string(limiter.per_minute()) + " requests per minute for this " +
                      (is_console                                      ? "account's web console"
                       : ctx.principal->kind == Principal::Kind::OAuth ? "user's apps"
                                                                       : "API key") +
                      "; retry after " + std::to_string(wait) + " s",
                  {{"retry_after", wait}});
  }
  // The console's endpoints (api/dashboard/): its own sign-in only, so an
  // app a person connected cannot reach keys, webhooks or other apps.
  if (route.console_only && !(ctx.principal->kind == Principal::Kind::OAuth && ctx.principal->first_party))
    throw Error("forbidden", std::string("the dashboard endpoints accept only the web console's sign-in (client ") +
                                 std::string(scribe::oauth::kConsoleClientId) + "), not " +
                                 (ctx.principal->kind == Principal::Kind::ApiKey ? "API keys" : "other apps' tokens"));
  // An MCP request is a POST for reads too: the handler checks each tool.
  if (!route.own_protocol && !apikey::allows_method(ctx.principal->permission, ctx.req.method))
    throw Error("scope_forbidden", "this API key is read-only; " + ctx.req.method + " needs a full-access key");
}

void ApiApp::run(std::shared_ptr<RequestContext> ctx, const Route& route, Responder respond, TimePoint started) {
  try {
    authorize(*ctx, route);
  } catch (const Error& err) {
    if (err.http_status() >= 500)
      log::error("request failed", {{"request_id", ctx->request_id}, {"code", err.code()}, {"error", err.message()}});
    // Whichever step refused the key (authenticate, or a handler checking a
    // cached key itself), the failure counts against the caller's address.
    if (route.authenticated && err.http_status() == 401) services_.authenticator.record_failure(ctx->req);
    ctx->release_db();
    finish(ctx->req, ctx->request_id, route.pattern, started, error_response(ctx->request_id, err), respond);
    return;
  } catch (const std::exception& err) {
    ctx->release_db();
    finish(ctx->req, ctx->request_id, route.pattern, started, failure_response(*ctx, err), respond);
    return;
  }
  execute(std::move(ctx), route,
          [this, started, pattern = route.pattern, respond](const RequestContext& done, Response r) {
            finish(done.req, done.request_id, pattern, started, std::move(r), respond);
          });
}

Response ApiApp::failure_response(const RequestContext& ctx, const std::exception& err) const {
  if (dynamic_cast<const pqxx::broken_connection*>(&err)) {
    log::error("database connection lost", {{"request_id", ctx.request_id}, {"error", err.what()}});
    return error_response(ctx.request_id, Error("internal_error", "the database is unreachable; retry"));
  }
  log::error("unhandled error", {{"request_id", ctx.request_id}, {"error", err.what()}});
  return error_response(ctx.request_id, Error("internal_error", "internal error; retry with backoff"));
}

void ApiApp::execute(std::shared_ptr<RequestContext> ctx, const Route& route,
                     std::function<void(const RequestContext&, Response)> done) {
  std::optional<std::string> idem_key;
  Response res;
  try {
    // Before the idempotency entry: a refusal here is not a response to keep.
    // Counted for the account, whichever key (or MCP tool) sends it.
    const bool bounded = route.long_running && ctx->principal;
    std::optional<InFlight::Slot> slot =
        bounded ? long_requests_.try_take("account:" + std::to_string(ctx->principal->account_id)) : std::nullopt;
    if (bounded && !slot)
      throw Error("rate_limited",
                  "this account already has " + std::to_string(long_requests_.limit()) +
                      " asks or regenerations running; retry after " +
                      std::to_string(limits::kLongRequestsRetryAfterSeconds) + " s",
                  {{"reason", "long_requests_in_flight"}, {"retry_after", limits::kLongRequestsRetryAfterSeconds}});
    if (ctx->req.method == "POST" && ctx->principal && !route.own_protocol && !route.claims_idempotency) {
      if (auto key = ctx->req.header("idempotency-key")) {
        auto outcome = Idempotency::begin(ctx->db(), ctx->principal->idempotency_principal(), *key, ctx->req);
        if (auto* cached = std::get_if<Response>(&outcome)) {
          slot.reset();
          ctx->release_db();
          done(*ctx, std::move(*cached));
          return;
        }
        idem_key = *key;
        ctx->idempotency_key = *key;
      }
    }
    if (route.async_handler) {
      ctx->release_db();
      auto finish_async = [ctx, idem_key, done](Response r) {
        if (idem_key) {
          try {
            Idempotency::finish(ctx->db(), ctx->principal->idempotency_principal(), *idem_key, r);
          } catch (const std::exception& err) {
            log::error("could not store idempotent response", {{"request_id", ctx->request_id}, {"error", err.what()}});
          }
          ctx->release_db();
        }
        done(*ctx, std::move(r));
      };
      route.async_handler(ctx, finish_async);
      return;
    }
    res = route.handler(*ctx);
  } catch (const Error& err) {
    if (err.http_status() >= 500)
      log::error("request failed", {{"request_id", ctx->request_id}, {"code", err.code()}, {"error", err.message()}});
    if (route.authenticated && err.http_status() == 401) services_.authenticator.record_failure(ctx->req);
    res = error_response(ctx->request_id, err);
  } catch (const std::exception& err) {
    res = failure_response(*ctx, err);
  }
  if (idem_key) {
    try {
      Idempotency::finish(ctx->db(), ctx->principal->idempotency_principal(), *idem_key, res);
    } catch (const std::exception& err) {
      log::error("could not store idempotent response", {{"request_id", ctx->request_id}, {"error", err.what()}});
    }
  }
  ctx->release_db();
  done(*ctx, std::move(res));
}

void ApiApp::call(const Principal& principal, Request req, Responder respond) {
  const std::string request_id = "req_" + crypto::random_hex(12);
  if (!parse_target(req.target, req.path, req.query)) {
    respond(error_response(request_id, Error::invalid("path", "the request target is not valid percent-encoding")));
    return;
  }
  auto match = router_.match(req.method, req.path);
  // Never the console's endpoints: an MCP tool acts for an app, not the console.
  if (!match.route || !match.route->authenticated || match.route->own_protocol || match.route->console_only) {
    respond(error_response(request_id, Error("not_found", "no such endpoint: " + req.method + " " + req.path)));
    return;
  }
  if (!apikey::allows_method(principal.permission, req.method)) {
    respond(error_response(
        request_id, Error("scope_forbidden", "this API key is read-only; " + req.method + " needs a full-access key")));
    return;
  }
  auto ctx = std::make_shared<RequestContext>(std::move(req), request_id, services_);
  ctx->principal = principal;
  ctx->params = std::move(match.params);
  execute(ctx, *match.route, [respond](const RequestContext&, Response r) { respond(std::move(r)); });
}

}  // namespace scribe::api
