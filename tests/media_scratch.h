#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

// A scratch folder for tests that make their media on the spot with flite,
// sox and ffmpeg (Debian packages the test command installs). One per test
// suite; removed with everything in it when the suite ends.
namespace scribe::testing {

class MediaScratch {
 public:
  explicit MediaScratch(const std::string& prefix)
      : dir_(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~MediaScratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  MediaScratch(const MediaScratch&) = delete;
  MediaScratch& operator=(const MediaScratch&) = delete;

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }
  // Runs `command` inside the folder, its output discarded; true when it exits 0.
  bool sh(const std::string& command) const {
    return std::system(("cd '" + dir_.string() + "' && " + command + " >/dev/null 2>&1").c_str()) == 0;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace scribe::testing
