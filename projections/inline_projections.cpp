#include "projections/inline_projections.h"

#include <vector>

#include "common/db.h"
#include "projections/projection.h"

namespace scribe::projections {
namespace {

const db::Statement kInlineShared{"projections.inline_shared",
                                  "select pg_advisory_xact_lock_shared(hashtextextended('projections:inline', 0))"};

class InlineProjections final : public eventstore::InlineProjector {
 public:
  // The inline ones of all(), picked once rather than on every append.
  InlineProjections() {
    for (auto* p : all())
      if (p->is_inline()) projections_.push_back(p);
  }

  void project(pqxx::work& txn, const std::vector<eventstore::RecordedEvent>& events) const override {
    txn.exec_prepared(kInlineShared.name);
    for (auto* p : projections_) p->apply_batch(txn, events);
  }

 private:
  std::vector<Projection*> projections_;
};

}  // namespace

std::shared_ptr<const eventstore::InlineProjector> inline_projections() {
  static const auto projector = std::make_shared<const InlineProjections>();
  return projector;
}

}  // namespace scribe::projections
