#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/http.h"
#include "common/json.h"
#include "common/text.h"

// The one place request input is validated. Every failure is a 400
// invalid_request naming the field, in the spec's envelope; handlers read
// typed values and never look at raw JSON or query strings themselves.
namespace scribe::api {

struct Range {
  std::optional<double> min;
  std::optional<double> max;
};

// Parses JSON text as every request body is parsed: malformed JSON is 400
// naming "body"; a key repeated within one object, at any depth, is 400
// naming the key by its path from the top ("max_charge_usd", "a.b",
// "items[0].id") instead of letting the last copy win.
Json parse_json_strictly(const std::string& text);

// A JSON request body. The body must be a JSON object (an empty body counts
// as {} when `empty_ok`); malformed JSON names the field "body".
class JsonBody {
 public:
  static JsonBody parse(const Request& req, bool empty_ok = false);
  explicit JsonBody(Json value) : value_(std::move(value)) {}

  bool has(const std::string& field) const;
  std::optional<std::string> string(const std::string& field, bool required = false, std::size_t min_len = 0,
                                    std::size_t max_len = SIZE_MAX) const;
  std::optional<double> number(const std::string& field, bool required = false, Range range = {}) const;
  std::optional<int64_t> integer(const std::string& field, bool required = false, Range range = {}) const;
  std::optional<bool> boolean(const std::string& field, bool required = false) const;
  std::optional<std::vector<std::string>> string_array(const std::string& field, bool required = false,
                                                       std::size_t max_items = SIZE_MAX) const;
  // Like string(), but the value must be one of `allowed`.
  std::optional<std::string> one_of(const std::string& field, const std::vector<std::string>& allowed,
                                    bool required = false) const;
  // Free text with surrounding blanks trimmed, `min_chars`-`max_chars`
  // characters (code points, not bytes) after trimming; valid UTF-8.
  std::optional<std::string> trimmed_text(const std::string& field, bool required, std::size_t min_chars,
                                          std::size_t max_chars) const;
  // An array of 0-`max_items` ids, each an integer >= 1 (duplicates kept).
  std::optional<std::vector<int64_t>> id_array(const std::string& field, std::size_t max_items) const;
  const Json& raw() const { return value_; }

 private:
  const Json* get(const std::string& field, bool required) const;
  Json value_;
};

// Query parameters. A parameter given twice is refused rather than guessed at.
class QueryParams {
 public:
  explicit QueryParams(const Request& req) : req_(req) {}
  std::optional<std::string> string(const std::string& name, std::size_t max_len = 4096) const;
  int64_t integer(const std::string& name, int64_t def, int64_t min, int64_t max) const;
  // Like integer(), but out-of-range values are clamped instead of refused.
  int64_t clamped_integer(const std::string& name, int64_t def, int64_t min, int64_t max) const;
  bool boolean(const std::string& name, bool def) const;
  std::string one_of(const std::string& name, const std::vector<std::string>& allowed, const std::string& def) const;
  // Free text with surrounding spaces trimmed, `min_chars`-`max_chars`
  // characters (code points, not bytes) after trimming.
  std::optional<std::string> trimmed_text(const std::string& name, bool required, std::size_t min_chars,
                                          std::size_t max_chars) const;
  // A comma-separated list of 1-`max_items` ids, each an integer >= 1
  // (spaces around an id are ignored; duplicates are kept).
  std::optional<std::vector<int64_t>> id_list(const std::string& name, std::size_t max_items) const;
  // The parameters named in `numbers`, `booleans` and `strings` as a JSON
  // body, so that a GET taking the options a POST takes in its body (the
  // clip quote) is validated by the same JsonBody readers. A number
  // parameter becomes a JSON number only when its text is exactly a JSON
  // number literal (digits, optional fraction and exponent, no sign but
  // '-', no blanks, no hex); any other text stays a string, which number()
  // and integer() refuse as they refuse a string in a body. A boolean
  // parameter's "true"/"1" and "false"/"0" become booleans, any other text
  // stays a string. Each value is read with string() first (so repeats,
  // control characters and bad UTF-8 are refused); absent ones stay absent.
  JsonBody as_body(const std::vector<std::string>& numbers, const std::vector<std::string>& booleans,
                   const std::vector<std::string>& strings) const;

 private:
  std::optional<int64_t> parse_integer(const std::string& name) const;
  const Request& req_;
};

}  // namespace scribe::api
