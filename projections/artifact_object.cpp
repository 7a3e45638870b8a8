#include "projections/artifact_object.h"

#include "common/crypto.h"
#include "common/log.h"
#include "common/object_store.h"

namespace scribe::projections {

std::optional<std::string> load_artifact_object(int64_t transcription_id, const Json& ref, const std::string& what) {
  const std::string key = ref.at("key").get<std::string>();
  auto bytes = object_store().get(key);
  if (!bytes) {
    log::warn(what + " missing", {{"transcription_id", transcription_id}, {"key", key}});
    return std::nullopt;
  }
  if (ref.contains("sha256") && crypto::sha256_hex(*bytes) != ref["sha256"].get<std::string>()) {
    log::error(what + " checksum mismatch", {{"transcription_id", transcription_id}, {"key", key}});
    return std::nullopt;
  }
  return bytes;
}

}  // namespace scribe::projections
