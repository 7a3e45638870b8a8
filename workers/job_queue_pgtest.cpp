#include "workers/job_queue.h"

#include <set>
#include <thread>

#include "commands/transcription_commands.h"
#include "domain/pricing.h"
#include "tests/pg_fixture.h"

namespace scribe::workers {
namespace {

using commands::Meta;

class JobQueue : public testing::PgTest {
 protected:
  // An account on `plan` with `jobs` transcriptions created. Jobs other
  // tests left in the shared queue are parked under a long lease (operational
  // state only: the projected `jobs` rows stay as they are) until TearDown.
  static std::pair<int64_t, std::vector<int64_t>> account_with_jobs(plans::Tier plan, int jobs) {
    auto conn = connect();
    Meta meta{"test", ""};
    int64_t acc = commands::open_account(store(), *conn, unique("jq") + "@example.com", plan, meta);
    commands::deposit(store(), *conn, acc, pricing::quote(60, plan).charge * jobs + 1'000'000, "test", meta);
    commands::Caller caller{acc, std::nullopt, std::nullopt, meta};
    std::vector<int64_t> ids;
    for (int i = 0; i < jobs; ++i) {
      transcription::Request r;
      r.source = "external_url";
      r.url = "https://media.example.com/" + std::to_string(i) + ".mp3";
      r.duration_seconds = 60;
      ids.push_back(commands::create(store(), *conn, caller, r).transcription_id);
    }
    pqxx::work txn(*conn);
    txn.exec_params(
        "insert into job_leases(transcription_id, attempt, account_id, owner, expires_at, claimed_at) "
        "select transcription_id, attempt, account_id, 'parked-by-test', now() + interval '1 hour', now() "
        "from jobs where account_id <> $1 on conflict (transcription_id, attempt) do update "
        "set owner = excluded.owner, expires_at = excluded.expires_at where job_leases.expires_at < now()",
        acc);
    txn.commit();
    return {acc, ids};
  }
  void TearDown() override {
    auto conn = connect();
    pqxx::work txn(*conn);
    txn.exec("delete from job_leases where owner = 'parked-by-test'");
    txn.commit();
  }
  static void release_foreign(pqxx::connection& conn, const std::optional<ClaimedJob>& job, int64_t account,
                              const std::string& owner) {
    if (job && job->account_id != account) release_job(conn, *job, owner);
  }
};

TEST_F(JobQueue, ConcurrentClaimsNeverTakeOneJobTwice) {
  auto [acc, ids] = account_with_jobs(plans::Tier::Free, 10);
  std::mutex mu;
  std::vector<std::pair<ClaimedJob, std::string>> claimed;
  std::vector<std::thread> threads;
  // Eight workers claim until the queue is empty (jobs other tests left
  // behind included; those are handed back afterwards).
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto conn = connect();
      const std::string owner = "w" + std::to_string(i);
      for (int n = 0; n < 500; ++n) {
        auto job = claim_job(*conn, owner, std::chrono::seconds(60));
        if (!job) break;
        std::lock_guard lock(mu);
        claimed.emplace_back(*job, owner);
      }
    });
  for (auto& t : threads) t.join();
  std::set<std::pair<int64_t, int>> seen;
  std::set<int64_t> mine;
  auto conn = connect();
  for (const auto& [j, owner] : claimed) {
    EXPECT_TRUE(seen.insert({j.transcription_id, j.attempt}).second)
        << "job " << j.transcription_id << " claimed twice";
    if (j.account_id == acc) {
      EXPECT_EQ(j.claims, 1);
      mine.insert(j.transcription_id);
    } else {
      release_job(*conn, j, owner);
    }
  }
  EXPECT_EQ(mine, std::set<int64_t>(ids.begin(), ids.end()));
  pqxx::work txn(*conn);
  EXPECT_EQ(txn.exec_params1("select count(*) from job_leases where account_id = $1 and expires_at > now()", acc)[0]
                .as<int>(),
            10);
}

TEST_F(JobQueue, PlanConcurrencyCapHoldsAcrossWorkersAndExpiredLeasesAreReclaimed) {
  // Starter: one job at a time.
  auto [acc, ids] = account_with_jobs(plans::Tier::Starter, 2);
  auto c1 = connect(), c2 = connect();
  auto first = claim_job(*c1, "worker-a", std::chrono::seconds(60));
  ASSERT_TRUE(first);
  ASSERT_EQ(first->account_id, acc);
  EXPECT_EQ(first->transcription_id, ids[0]);
  auto second = claim_job(*c2, "worker-b", std::chrono::seconds(60));
  EXPECT_FALSE(second && second->account_id == acc) << "the cap of one running job was passed";
  release_foreign(*c2, second, acc, "worker-b");

  // worker-a dies: once its lease has run out, the job is claimed again.
  EXPECT_TRUE(renew_lease(*c1, *first, "worker-a", std::chrono::seconds(60)));
  {
    pqxx::work txn(*c1);
    txn.exec_params("update job_leases set expires_at = now() - interval '1 second' where transcription_id = $1",
                    first->transcription_id);
    txn.commit();
  }
  auto again = claim_job(*c2, "worker-b", std::chrono::seconds(60));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->transcription_id, first->transcription_id);
  EXPECT_EQ(again->claims, 2);
  EXPECT_FALSE(renew_lease(*c1, *first, "worker-a", std::chrono::seconds(60))) << "the old owner kept its lease";
  EXPECT_TRUE(renew_lease(*c2, *again, "worker-b", std::chrono::seconds(60)));

  // Handing the job back frees the account's slot for the next claim.
  release_job(*c2, *again, "worker-b");
  auto third = claim_job(*c1, "worker-a", std::chrono::seconds(60));
  ASSERT_TRUE(third);
  EXPECT_EQ(third->transcription_id, ids[0]);
  EXPECT_EQ(third->claims, 2) << "a released claim does not count as an interruption";
}

}  // namespace
}  // namespace scribe::workers
