// The shared rate limiter against a real PostgreSQL, with allowance leased in
// chunks: two limiters on one bucket (two `scribe serve` processes) together
// never allow more than the limit, and spend all of it.
#include "api/rate_limiter.h"

#include <chrono>

#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {

class RateLimiterTest : public testing::PgTest {};

TEST_F(RateLimiterTest, LowLimitsGoToTheDatabaseForEveryRequest) {
  EXPECT_EQ(RateLimiter(60).chunk(), 1);
  EXPECT_EQ(RateLimiter(1199).chunk(), 1);
  EXPECT_EQ(RateLimiter(12000).chunk(), 20);
}

TEST_F(RateLimiterTest, LeasedChunksOfTwoProcessesStayWithinTheLimit) {
  constexpr int kPerMinute = 12000;  // 200 a second, chunks of 20
  auto conn_a = connect();
  auto conn_b = connect();
  const RateLimiter a(kPerMinute);
  const RateLimiter b(kPerMinute);
  const std::string bucket = unique("rl-chunks");
  const auto started = std::chrono::steady_clock::now();
  int64_t allowed = 0;
  int64_t wait_a = 0, wait_b = 0;
  // Alternate until both refuse: a fresh bucket allows a burst of the whole
  // limit, plus what the window adds while the loop runs.
  for (int i = 0; i < 3 * kPerMinute && (wait_a == 0 || wait_b == 0); ++i) {
    if (wait_a == 0 && (wait_a = a.take(*conn_a, bucket)) == 0) ++allowed;
    if (wait_b == 0 && (wait_b = b.take(*conn_b, bucket)) == 0) ++allowed;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_GE(wait_a, 1);
  EXPECT_GE(wait_b, 1);
  // Never more than the burst plus the allowance accrued meanwhile (one
  // request per 5 ms), and leased allowance is spent rather than lost.
  EXPECT_LE(allowed, kPerMinute + static_cast<int64_t>(elapsed * kPerMinute / 60.0) + 1);
  EXPECT_GE(allowed, kPerMinute);
}

}  // namespace
}  // namespace scribe::api
