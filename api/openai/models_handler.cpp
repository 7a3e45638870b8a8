// GET /v1/models and GET /v1/models/{model}: the names `model` takes on POST
// /v1/audio/transcriptions, as OpenAI's ListModelsResponse and Model
// (object, id, created, owned_by), each with the pipeline it runs.
#include "api/openai/handlers.h"
#include "api/openai/transcription_form.h"
#include "common/error.h"
#include "domain/pipelines.h"

namespace scribe::api::openai {
namespace {

// Model.created is required; these names did not appear at one time, so
// every model gives the day this surface was added (2026-11-27 UTC).
constexpr int64_t kCreated = 1'795'737'600;

Json model(const std::string& id, const std::string& pipeline) {
  return {{"id", id}, {"object", "model"}, {"created", kCreated}, {"owned_by", "scribe"}, {"pipeline", pipeline}};
}

std::vector<Json> models() {
  std::vector<Json> out;
  for (const auto& p : pipelines::catalogue()) out.push_back(model(p.code, p.code));
  for (const auto& alias : model_aliases()) out.push_back(model(alias, *pipeline_for_model(alias)));
  return out;
}

}  // namespace

Response ModelsHandler::list(RequestContext&) { return Response::json(200, {{"object", "list"}, {"data", models()}}); }

Response ModelsHandler::get(RequestContext& ctx) {
  const std::string& id = ctx.params.at("model");
  for (auto& m : models())
    if (m["id"] == id) return Response::json(200, m);
  throw Error("not_found", "model '" + id + "' is not one this service takes; GET /v1/models lists them",
              {{"field", "model"}});
}

}  // namespace scribe::api::openai
