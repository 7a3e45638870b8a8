#include "eventstore/event_store.h"
#include "tests/pg_fixture.h"
namespace scribe::es {
namespace {
class EventStoreTest : public testing::PgTest {};
TEST_F(EventStoreTest, Placeholder) { auto c = connect(); SUCCEED(); }
}
}
