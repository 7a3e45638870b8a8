#pragma once
#include <memory>
#include <optional>
#include <string>

// Where large artifacts live (transcripts, uploads, renders): keyed blobs
// behind an interface that an S3-compatible store can implement later. The
// default is a local directory (SCRIBE_OBJECT_STORE_DIR, else
// $SCRIBE_DATA_DIR/objects, else ./data/objects).
namespace scribe {

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // Writes the object whole or not at all (readers never see a partial one).
  virtual void put(const std::string& key, const std::string& bytes) = 0;
  // Moves a local file into the store under `key` (uploads, downloads).
  virtual void put_file(const std::string& key, const std::string& path) = 0;
  virtual std::optional<std::string> get(const std::string& key) const = 0;
  virtual bool exists(const std::string& key) const = 0;
  // A local path to read the object from (a local store gives its own file).
  virtual std::optional<std::string> local_path(const std::string& key) const = 0;
  // Removes every object whose key starts with `prefix` (a "folder/").
  virtual void remove_prefix(const std::string& prefix) = 0;
};

class LocalObjectStore final : public ObjectStore {
 public:
  explicit LocalObjectStore(std::string root);
  void put(const std::string& key, const std::string& bytes) override;
  void put_file(const std::string& key, const std::string& path) override;
  std::optional<std::string> get(const std::string& key) const override;
  bool exists(const std::string& key) const override;
  std::optional<std::string> local_path(const std::string& key) const override;
  void remove_prefix(const std::string& prefix) override;
  const std::string& root() const { return root_; }

 private:
  std::string path_of(const std::string& key) const;
  std::string root_;
};

// The process's store. configure_object_store is called once at start-up
// (app/settings.cpp's SCRIBE_OBJECT_STORE_DIR), before any thread uses it;
// object_store() throws std::logic_error before that.
void configure_object_store(const std::string& root);
ObjectStore& object_store();

}  // namespace scribe
