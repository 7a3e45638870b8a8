#include "projections/projection.h"

namespace scribe::projections {

Projection& accounts_projection();
Projection& api_keys_projection();
Projection& wallet_ledger_projection();
Projection& transcriptions_projection();
Projection& segments_projection();
Projection& revisions_projection();
Projection& search_projection();
Projection& enrichment_projection();
Projection& asks_projection();
Projection& clips_projection();
Projection& webhooks_projection();
Projection& webhook_outbox_projection();
Projection& oauth_projection();
Projection& realtime_projection();

const std::vector<Projection*>& all() {
  static const std::vector<Projection*> list = {
      &accounts_projection(), &api_keys_projection(), &transcriptions_projection(), &segments_projection(),
      // After segments and revisions: it copies the rows they wrote.
      &revisions_projection(), &search_projection(), &enrichment_projection(), &asks_projection(), &clips_projection(),
      &wallet_ledger_projection(), &webhooks_projection(), &webhook_outbox_projection(), &oauth_projection(),
      &realtime_projection()};
  return list;
}

Projection* find(const std::string& name) {
  for (auto* p : all())
    if (p->name() == name) return p;
  return nullptr;
}

}  // namespace scribe::projections
