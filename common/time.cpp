#include "common/time.h"

#include <cctype>
#include <cstdio>
#include <ctime>

namespace scribe {

TimePoint now() { return std::chrono::time_point_cast<std::chrono::microseconds>(Clock::now()); }

int64_t to_unix_micros(TimePoint t) { return t.time_since_epoch().count(); }

TimePoint from_unix_micros(int64_t micros) { return TimePoint(std::chrono::microseconds(micros)); }

std::string to_iso8601(TimePoint t) {
  int64_t micros = to_unix_micros(t);
  int64_t secs = micros >= 0 ? micros / 1000000 : (micros - 999999) / 1000000;
  int64_t millis = (micros - secs * 1000000) / 1000;
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  return buf;
}

std::optional<TimePoint> parse_iso8601(const std::string& text) {
  int y, mo, d, h, mi;
  double s;
  char sep;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &d, &sep, &h, &mi, &s, &consumed) < 7)
    return std::nullopt;
  if (sep != 'T' && sep != ' ') return std::nullopt;
  static const int days_in_month[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || h < 0 || mi > 59 || mi < 0 || !(s >= 0 && s < 61)) return std::nullopt;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > days_in_month[mo - 1] + (mo == 2 && leap ? 1 : 0)) return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(consumed));
  int offset_minutes = 0;
  if (rest == "Z" || rest == "z" || rest.empty()) {
    offset_minutes = 0;
  } else if (rest[0] == '+' || rest[0] == '-') {
    // +HH:MM, +HHMM or +HH; anything else is refused rather than guessed at.
    std::string digits;
    for (std::size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] == ':' && i == 3) continue;
      if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return std::nullopt;
      digits.push_back(rest[i]);
    }
    if (digits.size() != 2 && digits.size() != 4) return std::nullopt;
    if (rest.find(':') != std::string::npos && digits.size() != 4) return std::nullopt;
    int oh = std::stoi(digits.substr(0, 2));
    int om = digits.size() == 4 ? std::stoi(digits.substr(2, 2)) : 0;
    if (oh > 23 || om > 59) return std::nullopt;
    offset_minutes = (oh * 60 + om) * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  int64_t secs = static_cast<int64_t>(timegm(&tm)) - offset_minutes * 60;
  int64_t micros = secs * 1000000 + static_cast<int64_t>(s * 1000000.0 + 0.5);
  return from_unix_micros(micros);
}

}  // namespace scribe
