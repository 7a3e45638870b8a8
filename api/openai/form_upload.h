#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/http.h"
#include "api/openai/multipart.h"
#include "common/crypto.h"
#include "common/error.h"

// The body of POST /v1/audio/transcriptions as it arrives: a multipart form
// whose `file` part is written to a staging file and hashed (SHA-256) on the
// way, and whose other parts are kept as text fields. Nothing but the small
// fields is held in memory, whatever the file's size. The HTTP server feeds
// it (BodySink) on its I/O thread; the handler reads the outcome after the
// last byte.
namespace scribe::api::openai {

class FormUpload : public BodySink {
 public:
  // Bounds on what a form may hold besides its file.
  static constexpr std::size_t kMaxFieldBytes = 64 * 1024;
  static constexpr std::size_t kMaxFields = 64;
  static constexpr const char* kFileField = "file";

  // `file_path` is created when the file part begins; `max_file_bytes` is
  // the upload limit (a larger file part is refused with 413 as it arrives).
  FormUpload(std::string boundary, std::string file_path, int64_t max_file_bytes);
  ~FormUpload() override;
  FormUpload(const FormUpload&) = delete;
  FormUpload& operator=(const FormUpload&) = delete;

  bool write(const char* data, std::size_t n) override;
  // The body has ended: closes the file and checks the closing boundary.
  // Returns the error that refuses the form (400, or 413 for a file over the
  // limit), or nullopt when it is well formed.
  std::optional<Error> finish();

  // After finish():
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  bool has_file() const { return file_seen_; }
  const std::string& file_path() const { return path_; }
  const std::string& filename() const { return filename_; }
  const std::string& file_content_type() const { return file_type_; }
  int64_t file_bytes() const { return file_bytes_; }
  const std::string& file_sha256() const { return sha256_; }

 private:
  bool on_part(const PartHead& head);
  bool on_data(std::string_view data);
  bool on_part_end();
  bool refuse(Error err);

  MultipartParser parser_;
  std::string path_;
  int64_t max_file_bytes_;
  int fd_ = -1;
  enum class Part { None, Field, File, Skipped } part_ = Part::None;
  std::string field_name_;
  std::string field_value_;
  std::vector<std::pair<std::string, std::string>> fields_;
  bool file_seen_ = false;
  std::string filename_;
  std::string file_type_;
  int64_t file_bytes_ = 0;
  crypto::Sha256 hash_;
  std::string sha256_;
  std::optional<Error> error_;
  bool finished_ = false;
};

}  // namespace scribe::api::openai
