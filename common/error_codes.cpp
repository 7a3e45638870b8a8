#include "common/error_codes.h"

#include <array>

namespace scribe {
namespace {

// The retry advice is the spec's "Retry rules", stated per code.
constexpr std::string_view kNoRetry = "Do not retry the same request; fix it first.";
constexpr std::string_view kPermanentVideo =
    "Permanent: the same URL never succeeds. Do not retry it; submit the media with source upload instead where "
    "that is possible.";
constexpr std::string_view kProbeRetry =
    "Honour the Retry-After header; retrying with the same Idempotency-Key is safe, since 5xx answers are never "
    "cached.";
constexpr std::string_view kTopUp = "Do not retry until the wallet is topped up or the key's cap is raised.";

constexpr std::array<ErrorCodeInfo, 29> kCodes = {{
    {"unauthenticated", 401,
     "The Authorization header is missing, does not use the Bearer scheme, or carries an OAuth token that failed "
     "verification (expired, bad signature, revoked app).",
     kNoRetry},
    {"invalid_api_key", 401, "The API key is malformed, unknown, revoked or expired.",
     "Do not retry with the same key; use a valid key. Repeated failures from one address are answered 429 "
     "rate_limited for a while."},
    {"forbidden", 403,
     "The token type cannot use the endpoint (webhooks with OAuth), an upload URL no longer authorizes the request "
     "(error.reason), or system-generated Q&A cannot be deleted.",
     kNoRetry},
    {"entitlement_required", 403, "The account's plan lacks the capability.", kNoRetry},
    {"scope_forbidden", 403, "A read-only key was used on a method other than GET, HEAD or OPTIONS.",
     "Use a full-access key; do not retry with this one."},
    {"not_found", 404, "The resource is absent or not yours, or there is no such endpoint.", kNoRetry},
    {"session_ended", 410,
     "A realtime session can no longer be resumed: it ended (error.reason session_ended) or went stale without a "
     "connection (session_stale).",
     "Start a new realtime session; this one's audio is already settled and being transcribed."},
    {"not_ready", 409,
     "The transcription is not completed (error.reason says why; /subtitles and /transcript carry error.status), "
     "or an idempotent request with the same key is still in flight (in_flight_seconds, stale).",
     "Only reason transcription_processing resolves by waiting: honour Retry-After, or long-poll "
     "GET /api/v1/transcriptions/{id}/wait. The other reasons do not change by retrying."},
    {"invalid_request", 400,
     "Missing or malformed body, query, header or path parameter (error.field names it); unknown include; file over "
     "the plan's length cap; idempotency misuse; bad callback_url; feature_unavailable for clips. Also 405 for a "
     "wrong method, 413 for a body over the limit, 414 for a request target over 8 KiB and 431 for header fields "
     "over 16 KiB.",
     kNoRetry},
    {"unsupported_pipeline", 400,
     "pipeline_code is unknown or unavailable to the key; realtime is not enabled for "
     "the key.",
     kNoRetry},
    {"unsupported_language", 400, "The language is not in the pipeline's list (or the realtime set).", kNoRetry},
    {"addon_not_supported", 400, "An addon is unknown or incompatible with the pipeline.", kNoRetry},
    {"video_private", 400, "Link source: the video is private.", kPermanentVideo},
    {"video_unavailable", 400,
     "Link source: private, removed or invalid id, confirmed by the platform's official API. Also clip output video "
     "without a usable source video.",
     kPermanentVideo},
    {"video_unavailable_probe", 400,
     "Link source: unavailable per the download probe, or the link has no readable video id.", kPermanentVideo},
    {"video_members_only", 400, "Link source: the video is members-only.", kPermanentVideo},
    {"video_age_restricted", 400, "Link source: the video is age-restricted.", kPermanentVideo},
    {"probe_proxy_auth_quota", 503,
     "Link source on create and quote: the lookup infrastructure failed (vendor auth or quota).", kProbeRetry},
    {"probe_proxy_connectivity", 503, "Link source on create and quote: the lookup proxy could not be reached.",
     kProbeRetry},
    {"probe_runtime_misconfigured", 503, "Link source on create and quote: the probe runtime is misconfigured.",
     kProbeRetry},
    {"source_busy", 503,
     "Link source: the video platform is refusing requests for this video now. Nothing was started or charged and "
     "the idempotency key was released.",
     "Wait error.retry_after seconds (also Retry-After, at most 300), retry once with the same Idempotency-Key, and "
     "if refused again stop."},
    {"insufficient_funds", 402, "The wallet cannot cover the charge.", kTopUp},
    {"max_charge_exceeded", 402,
     "Create, retry or clip with max_charge_usd below the computed charge (the envelope carries charge_usd and "
     "max_charge_usd). Nothing was created or held.",
     "Do not raise the ceiling without the user's approval."},
    {"spend_cap_exceeded", 402, "The API key's monthly spending cap would be passed.", kTopUp},
    {"rate_limited", 429,
     "More than the allowed requests per minute for the key (or, for failed authentications, from the address); "
     "or the pay-as-you-go fair-use minutes of the rolling 6 h window are used up; or clip queue or download "
     "limits. error.message says which.",
     "Honour the Retry-After header (also error.retry_after); without one, back off 60 s."},
    {"qna_quota_exceeded", 429, "The Q&A allowance is used up; error.scope is transcript or day.",
     "For the daily scope, wait error.retry_after seconds (also Retry-After); the transcript scope does not reset "
     "by waiting."},
    {"queue_full", 429,
     "Create or retry, for accounts with a backlog limit: the envelope carries queued, max_queued and retry_after. "
     "No job was created.",
     "Honour Retry-After, then retry."},
    {"regen_limit_exceeded", 429,
     "POST /timestamps/regenerate: the transcription's posting chapters were regenerated 10 times since it was "
     "last transcribed (the spec leaves this code open; error.regen_count and error.regen_limit say how many).",
     "Waiting does not reset it; a retry that completes (a new transcription attempt) does."},
    {"internal_error", 500,
     "A server fault; also qna_timeout, and 503 for a preview step over 45 s (with retry_after).",
     "Safe to retry: back off exponentially (1, 2, 4, 8 s, up to 60 s), at most 5 attempts, reusing the same "
     "Idempotency-Key."},
}};

}  // namespace

std::span<const ErrorCodeInfo> error_codes() { return kCodes; }

const ErrorCodeInfo* find_error_code(std::string_view code) {
  for (const auto& c : kCodes)
    if (c.code == code) return &c;
  return nullptr;
}

}  // namespace scribe
