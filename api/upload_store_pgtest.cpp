// The sweep of expired unfinished uploads against a real PostgreSQL and the
// real staging directory: it deletes exactly the unfinished uploads past their
// expiry and grace, with their staging files, and leaves everything else.
#include "api/upload_store.h"

#include <filesystem>
#include <fstream>

#include "common/crypto.h"
#include "tests/pg_fixture.h"

namespace scribe::api {
namespace {
namespace fs = std::filesystem;

class UploadSweepTest : public testing::PgTest {
 protected:
  // An upload row expiring `expires_in` seconds from now (negative: in the past).
  static uploads::Row make(pqxx::connection& conn, const std::string& kind, int64_t expires_in) {
    uploads::Row row;
    row.id = (kind == "tus" ? "tus/" : "upl_") + crypto::random_hex(12);
    row.account_id = 1;
    row.kind = kind;
    row.content_type = "audio/wav";
    row.declared_size = 100;
    row.expires_unix = uploads::unix_now() + expires_in;
    uploads::insert(conn, row);
    return row;
  }
  // The file a body of this upload is written to while it arrives.
  static fs::path staging_file(const uploads::Row& row) {
    fs::path dir = uploads::staging_dir();
    return row.kind == "tus" ? dir / "tus" / row.id.substr(4) : dir / "presigned" / (row.id + ".a1b2c3");
  }
  static fs::path touch(const fs::path& p) {
    std::ofstream(p) << "partial body";
    return p;
  }
};

TEST_F(UploadSweepTest, DeletesExpiredUnfinishedUploadsWithTheirFilesAndNothingElse) {
  auto conn = connect();
  const int64_t grace = 3600;
  auto tus_gone = make(*conn, "tus", -2 * grace);
  auto put_gone = make(*conn, "presigned", -2 * grace);
  auto in_grace = make(*conn, "tus", -grace / 2);  // expired, but a PATCH may still be writing
  auto live = make(*conn, "presigned", 900);
  auto done = make(*conn, "tus", -2 * grace);
  ASSERT_TRUE(uploads::mark_completed(*conn, done.id, 100));
  // Another presigned upload whose id shares a prefix with put_gone's must keep its file.
  fs::path lookalike = touch(fs::path(uploads::staging_dir()) / "presigned" / (put_gone.id + "x.a1b2c3"));
  for (const auto* r : {&tus_gone, &put_gone, &in_grace, &live, &done}) touch(staging_file(*r));

  int deleted = 0;
  for (int n = -1; n != 0;) deleted += n = uploads::sweep_expired(*conn, grace, 1);  // batches of one
  EXPECT_GE(deleted, 2);  // other tests' expired uploads may be swept too

  EXPECT_FALSE(uploads::load(*conn, tus_gone.id));
  EXPECT_FALSE(uploads::load(*conn, put_gone.id));
  EXPECT_FALSE(fs::exists(staging_file(tus_gone)));
  EXPECT_FALSE(fs::exists(staging_file(put_gone)));
  for (const auto* r : {&in_grace, &live, &done}) {
    EXPECT_TRUE(uploads::load(*conn, r->id)) << r->id;
    EXPECT_TRUE(fs::exists(staging_file(*r))) << r->id;
  }
  EXPECT_TRUE(fs::exists(lookalike));
  EXPECT_EQ(uploads::sweep_expired(*conn, grace), 0);

  std::error_code ec;
  for (const auto* r : {&in_grace, &live, &done}) fs::remove(staging_file(*r), ec);
  fs::remove(lookalike, ec);
}

// A sweep killed after removing the files but before deleting the rows (the
// order it works in) is finished by the next one: no file outlives its row.
TEST_F(UploadSweepTest, RowsWhoseFilesAreAlreadyGoneAreStillDeleted) {
  auto conn = connect();
  auto row = make(*conn, "tus", -7200);
  ASSERT_FALSE(fs::exists(staging_file(row)));
  EXPECT_GE(uploads::sweep_expired(*conn, 3600), 1);
  EXPECT_FALSE(uploads::load(*conn, row.id));
}

}  // namespace
}  // namespace scribe::api
