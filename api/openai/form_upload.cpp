#include "api/openai/form_upload.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.h"

namespace scribe::api::openai {

FormUpload::FormUpload(std::string boundary, std::string file_path, int64_t max_file_bytes)
    : parser_(std::move(boundary), MultipartParser::Callbacks{[this](const PartHead& h) { return on_part(h); },
                                                              [this](std::string_view d) { return on_data(d); },
                                                              [this] { return on_part_end(); }}),
      path_(std::move(file_path)),
      max_file_bytes_(max_file_bytes) {}

FormUpload::~FormUpload() {
  if (fd_ >= 0) ::close(fd_);
}

bool FormUpload::refuse(Error err) {
  if (!error_) error_ = std::move(err);
  parser_.fail(error_->message());
  return false;
}

bool FormUpload::write(const char* data, std::size_t n) {
  if (error_) return false;
  if (!parser_.feed(std::string_view(data, n))) {
    if (!error_) error_ = Error::invalid("file", parser_.error());
    return false;
  }
  return true;
}

bool FormUpload::on_part(const PartHead& head) {
  if (head.name == kFileField) {
    if (file_seen_) return refuse(Error::invalid("file", "the form has more than one part named file"));
    file_seen_ = true;
    filename_ = head.filename.value_or("");
    file_type_ = head.content_type;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      log::error("cannot open upload staging file", {{"path", path_}, {"errno", errno}});
      return refuse(Error("internal_error", "cannot store the upload now; retry"));
    }
    part_ = Part::File;
    return true;
  }
  if (head.filename) {
    // A file under another name (no field of this endpoint takes one): its
    // bytes are read past, not kept.
    part_ = Part::Skipped;
    return true;
  }
  if (fields_.size() >= kMaxFields)
    return refuse(Error::invalid(head.name, "the form has more than " + std::to_string(kMaxFields) + " fields"));
  part_ = Part::Field;
  field_name_ = head.name;
  field_value_.clear();
  return true;
}

bool FormUpload::on_data(std::string_view data) {
  switch (part_) {
    case Part::File: {
      file_bytes_ += static_cast<int64_t>(data.size());
      if (file_bytes_ > max_file_bytes_)
        return refuse(Error("invalid_request",
                            "the file is larger than the upload limit of " + std::to_string(max_file_bytes_) + " bytes",
                            {{"field", "file"}}, 413));
      hash_.update(data);
      while (!data.empty()) {
        ssize_t w = ::write(fd_, data.data(), data.size());
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          log::error("upload staging write failed", {{"path", path_}, {"errno", errno}});
          return refuse(Error("internal_error", "cannot store the upload now; retry"));
        }
        data.remove_prefix(static_cast<std::size_t>(w));
      }
      return true;
    }
    case Part::Field:
      if (field_value_.size() + data.size() > kMaxFieldBytes)
        return refuse(Error::invalid(
            field_name_, "form field " + field_name_ + " is over " + std::to_string(kMaxFieldBytes / 1024) + " KiB"));
      field_value_.append(data);
      return true;
    case Part::Skipped:
    case Part::None:
      return true;
  }
  return true;
}

bool FormUpload::on_part_end() {
  if (part_ == Part::Field) fields_.emplace_back(std::move(field_name_), std::move(field_value_));
  if (part_ == Part::File) {
    ::close(fd_);
    fd_ = -1;
    sha256_ = hash_.hex();
  }
  part_ = Part::None;
  return true;
}

std::optional<Error> FormUpload::finish() {
  if (!finished_) {
    finished_ = true;
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (!error_ && !parser_.finish()) error_ = Error::invalid("file", parser_.error());
  }
  return error_;
}

}  // namespace scribe::api::openai
