#include "api/openai/multipart.h"

#include <cctype>
#include <vector>

#include "common/text.h"
#include "domain/upload.h"

namespace scribe::api::openai {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// Spaces or tabs between a delimiter and its CRLF (RFC 2046's transport
// padding); more than this many is not padding but a malformed body.
constexpr std::size_t kMaxPadding = 64;

bool is_boundary_char(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The parameters after the first ';' of a header value, names lower-cased,
// quoted values unquoted (a backslash escapes '"' and '\' only, so a Windows
// path sent raw keeps its backslashes). nullopt when a quote is not closed.
std::optional<std::vector<std::pair<std::string, std::string>>> header_params(std::string_view value) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = value.find(';');
  while (i != std::string_view::npos && i < value.size()) {
    ++i;  // past ';'
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
    std::size_t eq = value.find('=', i);
    std::size_t semi = value.find(';', i);
    if (eq == std::string_view::npos || (semi != std::string_view::npos && semi < eq)) {
      i = semi;  // a parameter without a value: skipped
      continue;
    }
    std::string name = to_lower(std::string(trim_blanks(value.substr(i, eq - i))));
    std::size_t v = eq + 1;
    while (v < value.size() && (value[v] == ' ' || value[v] == '\t')) ++v;
    std::string val;
    if (v < value.size() && value[v] == '"') {
      std::size_t k = v + 1;
      bool closed = false;
      for (; k < value.size(); ++k) {
        char c = value[k];
        if (c == '\\' && k + 1 < value.size() && (value[k + 1] == '"' || value[k + 1] == '\\')) {
          val += value[++k];
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          val += c;
        }
      }
      if (!closed) return std::nullopt;
      i = value.find(';', k + 1);
    } else {
      semi = value.find(';', v);
      val =
          std::string(trim_blanks(value.substr(v, semi == std::string_view::npos ? std::string_view::npos : semi - v)));
      i = semi;
    }
    out.emplace_back(std::move(name), std::move(val));
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 8187 ext-value: charset "'" [language] "'" percent-encoded octets;
// only UTF-8 (and its ASCII subset) is taken.
std::optional<std::string> ext_value(const std::string& v) {
  std::size_t q1 = v.find('\'');
  std::size_t q2 = q1 == std::string::npos ? std::string::npos : v.find('\'', q1 + 1);
  if (q2 == std::string::npos) return std::nullopt;
  std::string charset = to_lower(v.substr(0, q1));
  if (charset != "utf-8" && charset != "us-ascii") return std::nullopt;
  std::string out;
  for (std::size_t i = q2 + 1; i < v.size(); ++i) {
    if (v[i] != '%') {
      out += v[i];
      continue;
    }
    if (i + 2 >= v.size() || hex_value(v[i + 1]) < 0 || hex_value(v[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex_value(v[i + 1]) * 16 + hex_value(v[i + 2]));
    i += 2;
  }
  return out;
}

}  // namespace

std::optional<std::string> form_data_boundary(std::string_view content_type) {
  if (upload::media_type(content_type) != "multipart/form-data") return std::nullopt;
  auto params = header_params(content_type);
  if (!params) return std::nullopt;
  for (const auto& [name, value] : *params) {
    if (name != "boundary") continue;
    if (value.empty() || value.size() > 70 || value.back() == ' ') return std::nullopt;
    for (char c : value)
      if (!is_boundary_char(c)) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

MultipartParser::MultipartParser(std::string boundary, Callbacks callbacks)
    : delimiter_("\r\n--" + boundary), cb_(std::move(callbacks)) {
  // The first delimiter may open the body without a CRLF before it: a
  // virtual CRLF lets one search find it either way.
  buf_ = kCrlf;
}

void MultipartParser::fail(std::string message) {
  if (state_ == State::Failed) return;
  state_ = State::Failed;
  error_ = std::move(message);
}

bool MultipartParser::feed(std::string_view data) {
  if (state_ == State::Failed) return false;
  if (state_ == State::Epilogue) return true;  // after the closing delimiter: ignored
  buf_.append(data);
  while (step()) {
  }
  if (state_ == State::Failed) return false;
  buf_.erase(0, pos_);
  pos_ = 0;
  return true;
}

bool MultipartParser::finish() {
  if (state_ == State::Epilogue) return true;
  fail("the multipart body ended before its closing boundary");
  return false;
}

bool MultipartParser::step() {
  const std::size_t avail = buf_.size() - pos_;
  switch (state_) {
    case State::Preamble:
    case State::Body: {
      std::size_t at = buf_.find(delimiter_, pos_);
      // Without a delimiter, everything but a possible delimiter's beginning
      // at the end is body (or preamble, which is dropped).
      std::size_t upto = at != std::string::npos            ? at
                         : buf_.size() >= delimiter_.size() ? buf_.size() - (delimiter_.size() - 1)
                                                            : pos_;
      if (upto < pos_) upto = pos_;
      if (state_ == State::Body && upto > pos_ && !cb_.on_data(std::string_view(buf_).substr(pos_, upto - pos_))) {
        fail(error_.empty() ? "the part was refused" : error_);
        return false;
      }
      pos_ = upto;
      if (at == std::string::npos) return false;
      pos_ = at + delimiter_.size();
      if (state_ == State::Body && !cb_.on_part_end()) {
        fail(error_.empty() ? "the part was refused" : error_);
        return false;
      }
      state_ = State::AfterDelimiter;
      return true;
    }
    case State::AfterDelimiter: {
      if (avail < 2) return false;
      if (buf_.compare(pos_, 2, "--") == 0) {
        state_ = State::Epilogue;
        pos_ = buf_.size();
        return false;
      }
      std::size_t i = pos_;
      while (i < buf_.size() && (buf_[i] == ' ' || buf_[i] == '\t')) ++i;
      if (i - pos_ > kMaxPadding) {
        fail("the multipart body is malformed: a boundary line goes on after the boundary");
        return false;
      }
      if (buf_.size() - i < 2) return false;
      if (buf_.compare(i, 2, kCrlf) != 0) {
        fail("the multipart body is malformed: a boundary line goes on after the boundary");
        return false;
      }
      pos_ = i + 2;
      state_ = State::Headers;
      return true;
    }
    case State::Headers: {
      if (avail < 2) return false;
      std::string_view block;
      if (buf_.compare(pos_, 2, kCrlf) == 0) {
        pos_ += 2;  // a part with no header fields
      } else {
        std::size_t end = buf_.find("\r\n\r\n", pos_);
        if (end == std::string::npos) {
          if (avail > kMaxHeaderBytes) fail("the multipart body is malformed: a part's header fields are over 8 KiB");
          return false;
        }
        if (end - pos_ > kMaxHeaderBytes) {
          fail("the multipart body is malformed: a part's header fields are over 8 KiB");
          return false;
        }
        block = std::string_view(buf_).substr(pos_, end - pos_);
        pos_ = end + 4;
      }
      if (!parse_head(block)) return false;
      state_ = State::Body;
      return true;
    }
    case State::Epilogue:
    case State::Failed:
      return false;
  }
  return false;
}

bool MultipartParser::parse_head(std::string_view block) {
  PartHead head;
  bool disposition = false;
  // Header lines, obsolete line folding (a line starting with a blank) joined
  // to the line before.
  std::vector<std::string> lines;
  while (!block.empty()) {
    std::size_t eol = block.find(kCrlf);
    std::string_view line = block.substr(0, eol);
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t') && !lines.empty())
      lines.back() += " " + std::string(trim_blanks(line));
    else lines.emplace_back(line);
    if (eol == std::string_view::npos) break;
    block.remove_prefix(eol + 2);
  }
  for (const auto& line : lines) {
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      fail("the multipart body is malformed: a part's header line has no ':'");
      return false;
    }
    std::string name = to_lower(std::string(trim_blanks(std::string_view(line).substr(0, colon))));
    std::string_view value = trim_blanks(std::string_view(line).substr(colon + 1));
    if (name == "content-type") {
      head.content_type = std::string(value);
    } else if (name == "content-disposition") {
      if (to_lower(std::string(trim_blanks(value.substr(0, value.find(';'))))) != "form-data") {
        fail("a part's Content-Disposition is not form-data");
        return false;
      }
      auto params = header_params(value);
      if (!params) {
        fail("the multipart body is malformed: a part's Content-Disposition has an unclosed quote");
        return false;
      }
      std::optional<std::string> extended;
      for (const auto& [k, v] : *params) {
        if (k == "name") head.name = v;
        else if (k == "filename") head.filename = v;
        else if (k == "filename*") extended = ext_value(v);
      }
      if (extended) head.filename = extended;  // RFC 8187 wins over the plain form
      disposition = true;
    }
  }
  if (!disposition || head.name.empty()) {
    fail("the multipart body is malformed: a part has no Content-Disposition name");
    return false;
  }
  if (!cb_.on_part(head)) {
    fail(error_.empty() ? "the part was refused" : error_);
    return false;
  }
  return true;
}

}  // namespace scribe::api::openai
