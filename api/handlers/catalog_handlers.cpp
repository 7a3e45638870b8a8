// GET /api/v1/pipelines and GET /api/v1/openapi.yaml.
#include "api/handlers/handlers.h"
#include "common/embedded_assets.h"
#include "domain/pipelines.h"

namespace scribe::api {

Response PipelinesHandler::handle(RequestContext&) {
  Json list = Json::array();
  for (const auto& p : pipelines::catalogue()) list.push_back(pipelines::to_json(p));
  return Response::json(200, {{"pipelines", list}});
}

Response OpenApiHandler::handle(RequestContext&) {
  Response r;
  r.content_type = "application/yaml; charset=utf-8";
  r.body = std::string(assets::openapi_yaml());
  return r;
}

}  // namespace scribe::api
