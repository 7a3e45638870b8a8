#include "common/config.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace scribe {
namespace {

TEST(SettingValues, IntegersAreWholeAndInRange) {
  EXPECT_EQ(parse_int_setting("8080", 0, 65535), 8080);
  EXPECT_EQ(parse_int_setting("0", 0, 65535), 0);
  EXPECT_EQ(parse_int_setting("-5", -10, 10), -5);
  for (const char* bad : {"", "80x", " 8", "8 ", "1e3", "+1", "-", "0x10", "99999999999999999999"})
    EXPECT_THROW(parse_int_setting(bad, 0, 1'000'000), std::invalid_argument) << bad;
  EXPECT_THROW(parse_int_setting("65536", 0, 65535), std::invalid_argument);
  EXPECT_THROW(parse_int_setting("-1", 0, 65535), std::invalid_argument);
}

TEST(SettingValues, Booleans) {
  for (const char* t : {"1", "true", "TRUE", "yes", "On"}) EXPECT_TRUE(parse_bool_setting(t)) << t;
  for (const char* f : {"0", "false", "no", "OFF"}) EXPECT_FALSE(parse_bool_setting(f)) << f;
  for (const char* bad : {"", "2", "y", "enabled"}) EXPECT_THROW(parse_bool_setting(bad), std::invalid_argument) << bad;
}

TEST(SettingValues, Words) {
  EXPECT_EQ(split_words(" -beam  1e-40\t-pbeam 1e-30 "),
            (std::vector<std::string>{"-beam", "1e-40", "-pbeam", "1e-30"}));
  EXPECT_TRUE(split_words("  ").empty());
}

TEST(SettingValues, ListenAddresses) {
  std::string host;
  uint16_t port = 0;
  EXPECT_TRUE(parse_listen_address("127.0.0.1:9464", host, port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9464);
  EXPECT_TRUE(parse_listen_address("[::1]:0", host, port));
  EXPECT_EQ(host, "::1");
  for (const char* bad : {"9464", ":9464", "host:", "::1:80", "h:65536", "h:8x"})
    EXPECT_FALSE(parse_listen_address(bad, host, port)) << bad;
  EXPECT_TRUE(metrics_disabled("off"));
  EXPECT_TRUE(metrics_disabled("0"));
  EXPECT_FALSE(metrics_disabled("127.0.0.1:0"));
}

}  // namespace
}  // namespace scribe
