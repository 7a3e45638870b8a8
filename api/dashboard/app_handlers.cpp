// GET /dashboard/api/v1/connected-apps and DELETE .../connected-apps?client_id=:
// the console's page of the apps a person connected (api/dashboard/connected_apps.h).
// The app to disconnect is a query parameter, not a path segment: a Client ID
// Metadata Document client's id is an https URL, slashes and all.
#include "api/dashboard/connected_apps.h"
#include "api/dashboard/dashboard.h"
#include "api/params.h"
#include "api/services.h"
#include "common/error.h"
#include "domain/limits.h"

namespace scribe::api::dashboard {

Response ConnectedAppsHandler::list(RequestContext& ctx) {
  return Response::json(200, {{"apps", list_connected_apps(ctx.db(), ctx.caller().account_id)}});
}

Response ConnectedAppsHandler::disconnect(RequestContext& ctx) {
  const std::string client_id = QueryParams(ctx.req).string("client_id", limits::kOAuthClientIdMaxLength).value_or("");
  if (client_id.empty()) throw Error::invalid("client_id", "client_id is required: the app's client_id as listed");
  disconnect_app(ctx.services.store, ctx.db(), ctx.caller().account_id, client_id,
                 {ctx.caller().idempotency_principal(), ctx.request_id});
  return Response::json(200, {{"client_id", client_id}, {"disconnected", true}});
}

}  // namespace scribe::api::dashboard
