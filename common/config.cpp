#include "common/config.h"

#include "common/text.h"

#include <stdexcept>
#include <string>

namespace scribe {

int parse_int_setting(const std::string& text, int min, int max) {
  // std::stoi alone would take "80x" as 80 and " 8" as 8.
  bool digits = !text.empty();
  for (std::size_t i = 0; i < text.size(); ++i)
    digits = digits && ((text[i] >= '0' && text[i] <= '9') || (i == 0 && text[i] == '-' && text.size() > 1));
  if (!digits) throw std::invalid_argument("not an integer");
  long long v = 0;
  try {
    v = std::stoll(text);
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("out of range");
  }
  if (v < min || v > max) throw std::invalid_argument("out of range");
  return static_cast<int>(v);
}

bool parse_bool_setting(const std::string& text) {
  const std::string s = to_lower(text);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  throw std::invalid_argument("not a boolean");
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

bool parse_listen_address(const std::string& addr, std::string& host, uint16_t& port) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size() || addr.size() - colon - 1 > 5) return false;
  std::string h = addr.substr(0, colon);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string::npos) {
    return false;  // an IPv6 address needs its brackets
  }
  int p = 0;
  for (std::size_t i = colon + 1; i < addr.size(); ++i) {
    if (addr[i] < '0' || addr[i] > '9') return false;
    p = p * 10 + (addr[i] - '0');
  }
  if (p > 65535) return false;
  host = h;
  port = static_cast<uint16_t>(p);
  return true;
}

bool metrics_disabled(const std::string& addr) { return addr.empty() || addr == "0" || addr == "off"; }

}  // namespace scribe
