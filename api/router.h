#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/http.h"
#include "api/principal.h"
#include "common/config.h"
#include "common/db.h"

namespace scribe::api {

struct Services;

// Everything a handler gets: the request, who is calling, path parameters,
// and a database connection leased on first use (so public endpoints that
// never touch the database never wait for one).
struct RequestContext {
  Request req;
  std::string request_id;
  std::optional<Principal> principal;
  std::map<std::string, std::string> params;
  Services& services;
  // The Idempotency-Key this request claimed (ApiApp::execute), for a handler
  // that stores its response itself (Idempotency::finish with a transaction).
  std::optional<std::string> idempotency_key;

  RequestContext(Request r, std::string id, Services& s) : req(std::move(r)), request_id(std::move(id)), services(s) {}
  pqxx::connection& db();
  void release_db() { lease_.reset(); }
  const Principal& caller() const { return *principal; }
  // Path parameter `name` as an integer id >= 1, else 404 (ids that cannot
  // exist are reported like ids that do not).
  int64_t id_param(const std::string& name, const std::string& what) const;

 private:
  std::optional<db::Lease> lease_;
};

using Handler = std::function<Response(RequestContext&)>;
// For handlers that answer later (long-polls): they must call the responder
// exactly once, from any thread, and must not keep the database lease.
using AsyncHandler = std::function<void(std::shared_ptr<RequestContext>, Responder)>;

struct Route {
  std::string method{};
  std::string pattern{};  // e.g. /api/v1/transcriptions/{id}
  bool authenticated = true;
  bool rate_limited = true;
  // Routes are declared with designated initializers (routes.cpp), so every
  // member has a default and a route names only what it sets.
  Handler handler{};
  AsyncHandler async_handler{};
  std::vector<std::string> segments{};  // pattern split on '/' (Router::add)
  // The handler reads the caller's key row in its own statement and refuses a
  // revoked, expired or unknown key itself (Principal::verified is false), so
  // the request needs no separate authentication round trip.
  bool handler_checks_key = false;
  // The route speaks a protocol of its own over POST (MCP at /mcp): a
  // read-only key may POST to it (the handler checks each operation), it
  // takes no Idempotency-Key, and internal calls never reach it.
  bool own_protocol = false;
  // The handler computes on its request thread for long (asks,
  // regeneration): an account may have limits::kLongRequestsInFlightPerAccount
  // of these running at once, one more is refused (ApiApp::execute).
  bool long_running = false;
  // The handler claims the Idempotency-Key itself, with a fingerprint of
  // what it parsed (a multipart body streamed to disk is not in Request::body:
  // api/openai/), so ApiApp::execute leaves the key alone.
  bool claims_idempotency = false;
  // Only the service's own web console may call it (the first-party OAuth
  // client's access tokens); API keys and other apps' tokens get 403
  // forbidden (ApiApp::authorize). The /dashboard/api/v1 endpoints.
  bool console_only = false;
};

class Router {
 public:
  void add(Route route);
  struct Match {
    const Route* route = nullptr;
    std::map<std::string, std::string> params;
    std::vector<std::string> allowed_methods;  // when the path exists under other methods
  };
  Match match(const std::string& method, const std::string& path) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

}  // namespace scribe::api
