#include "common/object_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace scribe {
namespace fs = std::filesystem;
namespace {

// The data reaches the disk before the rename makes it visible, so a crash
// leaves either the old object or the new one.
void sync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("object store: cannot open " + path);
  ::fsync(fd);
  ::close(fd);
}

std::string temp_name(const fs::path& target) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return target.string() + ".tmp-" + std::to_string(rng());
}

}  // namespace

LocalObjectStore::LocalObjectStore(std::string root) : root_(fs::absolute(root).string()) {
  fs::create_directories(root_);
}

std::string LocalObjectStore::path_of(const std::string& key) const {
  // Keys are ours, never a user's string, but a key that climbs out of the
  // root would still be a bug worth stopping.
  if (key.empty() || key.front() == '/' || key.find("..") != std::string::npos)
    throw std::invalid_argument("object store: bad key " + key);
  return (fs::path(root_) / key).string();
}

void LocalObjectStore::put(const std::string& key, const std::string& bytes) {
  const fs::path target = path_of(key);
  fs::create_directories(target.parent_path());
  const std::string tmp = temp_name(target);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("object store: cannot write " + tmp);
  }
  sync_file(tmp);
  fs::rename(tmp, target);
}

void LocalObjectStore::put_file(const std::string& key, const std::string& path) {
  const fs::path target = path_of(key);
  fs::create_directories(target.parent_path());
  std::error_code ec;
  fs::rename(path, target, ec);
  if (!ec) return;
  // Another file system: copy, sync, then rename into place.
  const std::string tmp = temp_name(target);
  fs::copy_file(path, tmp, fs::copy_options::overwrite_existing);
  sync_file(tmp);
  fs::rename(tmp, target);
  fs::remove(path);
}

std::optional<std::string> LocalObjectStore::get(const std::string& key) const {
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool LocalObjectStore::exists(const std::string& key) const { return fs::is_regular_file(path_of(key)); }

std::optional<std::string> LocalObjectStore::local_path(const std::string& key) const {
  auto p = path_of(key);
  if (!fs::is_regular_file(p)) return std::nullopt;
  return p;
}

void LocalObjectStore::remove_prefix(const std::string& prefix) {
  const fs::path p = path_of(prefix);
  std::error_code ec;
  if (!prefix.empty() && prefix.back() == '/') {
    fs::remove_all(p, ec);
  } else {
    fs::remove(p, ec);
  }
}

namespace {
std::unique_ptr<LocalObjectStore>& configured_store() {
  static std::unique_ptr<LocalObjectStore> store;
  return store;
}
}  // namespace

void configure_object_store(const std::string& root) { configured_store() = std::make_unique<LocalObjectStore>(root); }

ObjectStore& object_store() {
  auto& store = configured_store();
  // A process that forgot to configure it would otherwise write somewhere
  // nobody reads.
  if (!store) throw std::logic_error("the object store is not configured (configure_object_store at start-up)");
  return *store;
}

}  // namespace scribe
