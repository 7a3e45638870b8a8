#include "api/params.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/error.h"

namespace scribe::api {
namespace {

void check_range(const std::string& field, double v, const Range& r) {
  if ((r.min && v < *r.min) || (r.max && v > *r.max)) {
    std::string bounds = r.min && r.max ? "between " + format_number(*r.min) + " and " + format_number(*r.max)
                         : r.min        ? ">= " + format_number(*r.min)
                                        : "<= " + format_number(*r.max);
    throw Error::invalid(field, field + " must be " + bounds);
  }
}

// `s` is exactly a JSON number literal (RFC 8259 §6): -?(0|[1-9][0-9]*)
// (.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

Json parse_json_strictly(const std::string& text) {
  // nlohmann keeps the last of repeated keys; the parser's callback sees
  // every key as it is read, so the first repeat is noted (with its path)
  // and refused after parsing. One frame per open object or array.
  struct Frame {
    bool object;
    std::string path;            // of the object or array itself, "" at the top
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string key;             // objects: the key whose value is being read
    std::size_t items = 0;       // arrays: elements seen so far
  };
  std::vector<Frame> stack;
  std::optional<std::string> repeated;
  auto child_path = [&]() -> std::string {
    if (stack.empty()) return "";
    const Frame& f = stack.back();
    if (!f.object) return f.path + "[" + std::to_string(f.items) + "]";
    return f.path.empty() ? f.key : f.path + "." + f.key;
  };
  auto counted = [&] {
    if (!stack.empty() && !stack.back().object) ++stack.back().items;
  };
  Json::parser_callback_t note = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        Frame f{event == Json::parse_event_t::object_start, child_path(), {}, {}, 0};
        counted();
        stack.push_back(std::move(f));
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Json::parse_event_t::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && !repeated) repeated = child_path();
        break;
      }
      case Json::parse_event_t::value:
        counted();
        break;
    }
    return true;
  };
  Json value = Json::parse(text, note, false);
  if (value.is_discarded()) throw Error::invalid("body", "the body is not valid JSON");
  if (repeated)
    throw Error::invalid(*repeated, "the key " + *repeated + " appears more than once in the body; send it once");
  return value;
}

JsonBody JsonBody::parse(const Request& req, bool empty_ok) {
  if (trim(req.body).empty()) {
    if (empty_ok) return JsonBody(Json::object());
    throw Error::invalid("body", "a JSON object body is required");
  }
  Json value = parse_json_strictly(req.body);
  if (!value.is_object()) throw Error::invalid("body", "the body must be a JSON object");
  return JsonBody(std::move(value));
}

bool JsonBody::has(const std::string& field) const { return value_.contains(field) && !value_[field].is_null(); }

const Json* JsonBody::get(const std::string& field, bool required) const {
  auto it = value_.find(field);
  if (it == value_.end() || it->is_null()) {
    if (required) throw Error::invalid(field, field + " is required");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonBody::string(const std::string& field, bool required, std::size_t min_len,
                                            std::size_t max_len) const {
  const Json* v = get(field, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw Error::invalid(field, field + " must be a string");
  std::string s = v->get<std::string>();
  // PostgreSQL cannot store U+0000 in text or jsonb.
  if (s.find('\0') != std::string::npos) throw Error::invalid(field, field + " must not contain NUL characters");
  if (s.size() < min_len || s.size() > max_len)
    throw Error::invalid(field,
                         field + " must be " + std::to_string(min_len) + "-" + std::to_string(max_len) + " characters");
  return s;
}

std::optional<std::string> JsonBody::trimmed_text(const std::string& field, bool required, std::size_t min_chars,
                                                  std::size_t max_chars) const {
  auto raw = string(field, required);
  if (!raw) return raw;
  const std::string s(trim(*raw));
  const std::size_t n = utf8_length(s);
  if (n < min_chars || n > max_chars)
    throw Error::invalid(field, field + " must be " + std::to_string(min_chars) + "-" + std::to_string(max_chars) +
                                    " characters after trimming blanks");
  return s;
}

std::optional<std::vector<int64_t>> JsonBody::id_array(const std::string& field, std::size_t max_items) const {
  const Json* v = get(field, false);
  if (!v || v->is_null()) return std::nullopt;
  const std::string bad =
      field + " must be an array of at most " + std::to_string(max_items) + " ids, each an integer >= 1";
  if (!v->is_array() || v->size() > max_items) throw Error::invalid(field, bad);
  std::vector<int64_t> ids;
  for (const auto& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() < 1) throw Error::invalid(field, bad);
    ids.push_back(e.get<int64_t>());
  }
  return ids;
}

std::optional<double> JsonBody::number(const std::string& field, bool required, Range range) const {
  const Json* v = get(field, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw Error::invalid(field, field + " must be a number");
  double d = v->get<double>();
  if (!std::isfinite(d)) throw Error::invalid(field, field + " must be a finite number");
  check_range(field, d, range);
  return d;
}

std::optional<int64_t> JsonBody::integer(const std::string& field, bool required, Range range) const {
  const Json* v = get(field, required);
  if (!v) return std::nullopt;
  int64_t i;
  if (v->is_number_integer()) {
    i = v->get<int64_t>();
  } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e15) {
    i = static_cast<int64_t>(v->get<double>());  // 3.0 is an integer in JSON's number model
  } else {
    throw Error::invalid(field, field + " must be an integer");
  }
  check_range(field, static_cast<double>(i), range);
  return i;
}

std::optional<bool> JsonBody::boolean(const std::string& field, bool required) const {
  const Json* v = get(field, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw Error::invalid(field, field + " must be true or false");
  return v->get<bool>();
}

std::optional<std::vector<std::string>> JsonBody::string_array(const std::string& field, bool required,
                                                               std::size_t max_items) const {
  const Json* v = get(field, required);
  if (!v) return std::nullopt;
  if (!v->is_array()) throw Error::invalid(field, field + " must be an array of strings");
  if (v->size() > max_items)
    throw Error::invalid(field, field + " may have at most " + std::to_string(max_items) + " entries");
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) throw Error::invalid(field, field + " must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::optional<std::string> JsonBody::one_of(const std::string& field, const std::vector<std::string>& allowed,
                                            bool required) const {
  auto s = string(field, required);
  if (!s) return s;
  for (const auto& a : allowed)
    if (*s == a) return s;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw Error::invalid(field, field + " must be one of: " + list);
}

std::optional<std::string> QueryParams::string(const std::string& name, std::size_t max_len) const {
  std::optional<std::string> found;
  for (const auto& [k, v] : req_.query) {
    if (k != name) continue;
    if (found) throw Error::invalid(name, name + " is given more than once");
    found = v;
  }
  if (found && (found->size() > max_len || has_control_chars(*found) || !is_valid_utf8(*found)))
    throw Error::invalid(name, name + " is too long, has control characters or is not UTF-8");
  return found;
}

std::optional<int64_t> QueryParams::parse_integer(const std::string& name) const {
  auto s = string(name, 32);
  if (!s) return std::nullopt;
  std::size_t i = (*s)[0] == '-' ? 1 : 0;
  if (s->empty() || i == s->size() || s->size() > 18) throw Error::invalid(name, name + " must be an integer");
  for (std::size_t j = i; j < s->size(); ++j)
    if ((*s)[j] < '0' || (*s)[j] > '9') throw Error::invalid(name, name + " must be an integer");
  return std::stoll(*s);
}

int64_t QueryParams::integer(const std::string& name, int64_t def, int64_t min, int64_t max) const {
  auto v = parse_integer(name);
  if (!v) return def;
  check_range(name, static_cast<double>(*v), {static_cast<double>(min), static_cast<double>(max)});
  return *v;
}

int64_t QueryParams::clamped_integer(const std::string& name, int64_t def, int64_t min, int64_t max) const {
  auto v = parse_integer(name);
  if (!v) return def;
  return std::clamp(*v, min, max);
}

bool QueryParams::boolean(const std::string& name, bool def) const {
  auto s = string(name, 8);
  if (!s) return def;
  if (*s == "true" || *s == "1") return true;
  if (*s == "false" || *s == "0") return false;
  throw Error::invalid(name, name + " must be true or false");
}

std::string QueryParams::one_of(const std::string& name, const std::vector<std::string>& allowed,
                                const std::string& def) const {
  auto s = string(name, 256);
  if (!s) return def;
  for (const auto& a : allowed)
    if (*s == a) return *s;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw Error::invalid(name, name + " must be one of: " + list);
}

std::optional<std::string> QueryParams::trimmed_text(const std::string& name, bool required, std::size_t min_chars,
                                                     std::size_t max_chars) const {
  // Four bytes per character at most, plus room for the spaces trimmed off.
  auto raw = string(name, 4 * max_chars + 1024);
  if (!raw) {
    if (required) throw Error::invalid(name, name + " is required");
    return raw;
  }
  std::string s(trim(*raw, " "));
  const std::size_t n = utf8_length(s);
  if (n < min_chars || n > max_chars)
    throw Error::invalid(name, name + " must be " + std::to_string(min_chars) + "-" + std::to_string(max_chars) +
                                   " characters after trimming spaces");
  return s;
}

JsonBody QueryParams::as_body(const std::vector<std::string>& numbers, const std::vector<std::string>& booleans,
                              const std::vector<std::string>& strings) const {
  Json body = Json::object();
  for (const auto& name : numbers)
    if (auto v = string(name)) {
      // A literal too large for a double is discarded by the parser: it stays a string.
      Json n = is_json_number(*v) ? Json::parse(*v, nullptr, false) : Json();
      body[name] = n.is_number() ? n : Json(*v);
    }
  for (const auto& name : booleans)
    if (auto v = string(name)) {
      if (*v == "true" || *v == "1") body[name] = true;
      else if (*v == "false" || *v == "0") body[name] = false;
      else body[name] = *v;
    }
  for (const auto& name : strings)
    if (auto v = string(name)) body[name] = *v;
  return JsonBody(std::move(body));
}

std::optional<std::vector<int64_t>> QueryParams::id_list(const std::string& name, std::size_t max_items) const {
  auto raw = string(name, 32 * max_items);
  if (!raw) return std::nullopt;
  const std::string bad =
      name + " must be a comma-separated list of 1-" + std::to_string(max_items) + " ids, each an integer >= 1";
  std::vector<int64_t> ids;
  // string() refused control characters, so only spaces can surround an id.
  for (const std::string& item : split_list(*raw, EmptyItems::kKeep)) {
    if (item.empty() || item.size() > 18 || item.find_first_not_of("0123456789") != std::string::npos)
      throw Error::invalid(name, bad);
    const int64_t id = std::stoll(item);
    if (id < 1) throw Error::invalid(name, bad);
    ids.push_back(id);
    if (ids.size() > max_items) throw Error::invalid(name, bad);
  }
  return ids;
}

}  // namespace scribe::api
