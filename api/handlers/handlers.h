#pragma once
#include "api/router.h"

// One class per endpoint; each `handle` runs on a worker thread with the
// caller already authenticated, rate-limited and scope-checked.
namespace scribe::api {

struct HealthzHandler { static Response handle(RequestContext& ctx); };    // GET /healthz
struct ReadyzHandler { static Response handle(RequestContext& ctx); };     // GET /readyz
struct MetricsHandler { static Response handle(RequestContext& ctx); };    // GET /metrics
struct OpenApiHandler { static Response handle(RequestContext& ctx); };    // GET /api/v1/openapi.yaml
struct MeHandler { static Response handle(RequestContext& ctx); };         // GET /api/v1/me
struct PipelinesHandler { static Response handle(RequestContext& ctx); };  // GET /api/v1/pipelines

}  // namespace scribe::api
