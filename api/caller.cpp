#include "api/caller.h"

namespace scribe::api {

commands::Caller caller_of(const RequestContext& ctx) {
  const Principal& p = ctx.caller();
  return commands::Caller{p.account_id, p.key_id, p.monthly_cap,
                          commands::Meta{p.idempotency_principal(), ctx.request_id}};
}

}  // namespace scribe::api
