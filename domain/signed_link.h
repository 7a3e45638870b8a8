#pragma once
#include <cstdint>
#include <string>

// Links that are their own authorization (a clip's files, a transcription's
// media): an HMAC-SHA256 of what the link names and when it expires, under a
// server-side secret (common/secrets.h). One scheme for every such link, so
// a flaw is fixed once. Pure.
namespace scribe::signed_link {

// hex HMAC-SHA256(secret, scope + ":" + expires_unix). `scope` names the
// resource and its kind ("clip-file:12:clip.mp4"), so a signature made for
// one kind of link never opens another.
std::string signature(const std::string& secret, const std::string& scope, int64_t expires_unix);

// The signature is the one for (scope, expires_unix), compared in constant
// time, and the link has not expired at now_unix.
bool verify(const std::string& secret, const std::string& scope, int64_t expires_unix, const std::string& signature,
            int64_t now_unix);

}  // namespace scribe::signed_link
