#include "domain/password.h"

#include <gtest/gtest.h>

namespace scribe::password {
namespace {

TEST(Password, HashFormatAndVerify) {
  const std::string stored = hash("correct horse battery", 10);
  EXPECT_EQ(stored.rfind("scrypt$10$8$1$", 0), 0u) << stored;
  EXPECT_TRUE(verify("correct horse battery", stored));
  EXPECT_FALSE(verify("correct horse batterY", stored));
  EXPECT_FALSE(verify("", stored));
  // Salted: the same password hashes differently each time.
  EXPECT_NE(hash("correct horse battery", 10), stored);
  // A hash made at another cost still verifies (its cost is in it).
  EXPECT_TRUE(verify("pw-0123456789", hash("pw-0123456789", 11)));
}

TEST(Password, MalformedStoredValuesNeverVerify) {
  const std::string good = hash("correct horse battery", 10);
  for (const std::string& bad :
       {std::string(""), std::string("plain"), std::string("scrypt$10$8$1$abc"), good.substr(0, good.size() - 2),
        std::string("bcrypt") + good.substr(6), std::string("scrypt$40$8$1$") + good.substr(14),
        std::string("scrypt$x$8$1$") + good.substr(14), std::string("scrypt$10$0$1$") + good.substr(14)})
    EXPECT_FALSE(verify("correct horse battery", bad)) << bad;
}

TEST(Password, NewPasswordRules) {
  EXPECT_FALSE(new_password_error("0123456789"));
  EXPECT_FALSE(new_password_error("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"));
  EXPECT_TRUE(new_password_error("012345678"));
  EXPECT_TRUE(new_password_error("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"));  // 10 bytes, 5 characters
  EXPECT_TRUE(new_password_error("0123456789\x01"));
  EXPECT_TRUE(new_password_error("0123456789\xff"));
  EXPECT_TRUE(new_password_error(std::string(1025, 'a')));
}

TEST(Password, DummyHashIsStableAndVerifiesNothing) {
  const std::string& a = dummy_hash(10);
  EXPECT_EQ(&a, &dummy_hash(10));
  EXPECT_EQ(a.rfind("scrypt$10$", 0), 0u);
  EXPECT_FALSE(verify("", a));
  EXPECT_FALSE(verify("0123456789", a));
}

}  // namespace
}  // namespace scribe::password
