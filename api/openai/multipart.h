#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

// multipart/form-data (RFC 7578 over RFC 2046 section 5.1) read as it
// arrives, in pieces of any size, so an upload of a gigabyte is parsed while
// it streams to disk and never held in memory: the parser keeps at most one
// part's header block and a delimiter's length of look-behind. What the parts
// contain is the caller's business (Callbacks).
namespace scribe::api::openai {

// The boundary parameter of a Content-Type "multipart/form-data; boundary=..."
// (quoted or not, any case for the names); nullopt when the media type is
// another, or the boundary is missing, empty, longer than RFC 2046's 70
// characters or has characters it does not allow.
std::optional<std::string> form_data_boundary(std::string_view content_type);

// One part's headers, as far as form-data uses them.
struct PartHead {
  std::string name;                     // Content-Disposition name
  std::optional<std::string> filename;  // Content-Disposition filename (a file part)
  std::string content_type;             // as sent; empty when absent
};

class MultipartParser {
 public:
  struct Callbacks {
    // A part begins. Returning false stops the parse (error() is then the
    // message the callback gave through fail()).
    std::function<bool(const PartHead&)> on_part;
    // Bytes of the current part's body, in order, possibly many calls.
    std::function<bool(std::string_view)> on_data;
    // The current part's body ended.
    std::function<bool()> on_part_end;
  };
  // Bounds on what is buffered: a part's header block.
  static constexpr std::size_t kMaxHeaderBytes = 8 * 1024;

  MultipartParser(std::string boundary, Callbacks callbacks);

  // Feeds the next bytes of the body. False once the body is malformed or a
  // callback refused (then error() says why, and later calls do nothing).
  bool feed(std::string_view data);
  // The body ended: true when the closing delimiter was seen.
  bool finish();
  bool complete() const { return state_ == State::Epilogue; }
  const std::string& error() const { return error_; }
  // Lets a callback refuse with its own message (it then returns false).
  void fail(std::string message);

 private:
  enum class State { Preamble, AfterDelimiter, Headers, Body, Epilogue, Failed };
  bool step();  // one transition on buf_; false when it needs more bytes or failed
  bool parse_head(std::string_view block);

  std::string delimiter_;  // CRLF "--" boundary
  Callbacks cb_;
  State state_ = State::Preamble;
  std::string buf_;
  std::size_t pos_ = 0;  // consumed bytes at the front of buf_
  std::string error_;
};

}  // namespace scribe::api::openai
