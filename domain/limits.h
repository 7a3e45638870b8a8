#pragma once
#include <cstddef>
#include <cstdint>

// Every limit of the spec's Limits table, in one place. Per-plan limits are in
// domain/plans.h; process settings (pool sizes, ports) in common/config.h.
namespace scribe::limits {

inline constexpr int kRequestsPerMinute = 60;  // default; operators may raise it
inline constexpr int kRateWindowMs = 60'000;
inline constexpr int kMaxActiveApiKeys = 20;
inline constexpr int64_t kMaxUploadBytes = 1'073'741'824;
inline constexpr int kPresignedUploadTtlSeconds = 900;
inline constexpr int kResumableTicketTtlSeconds = 3600;
inline constexpr int kPlatformMaxFileMinutes = 12 * 60;
inline constexpr int kIdempotencyKeyMaxLength = 128;
inline constexpr int kIdempotencyTtlSeconds = 24 * 3600;
inline constexpr int kIdempotencyStaleSeconds = 120;
inline constexpr int kPreviewStepTimeoutSeconds = 45;
inline constexpr int kMaxAddons = 8;
inline constexpr int kClientReferenceMaxLength = 200;
inline constexpr int kCallbackUrlMaxLength = 2048;
inline constexpr int kWaitTimeoutMinSeconds = 1;
inline constexpr int kWaitTimeoutMaxSeconds = 45;
inline constexpr int kWaitTimeoutDefaultSeconds = 30;
inline constexpr int kListLimitMin = 1;
inline constexpr int kListLimitMax = 200;
inline constexpr int kListLimitDefault = 50;
inline constexpr int kResultMaxChapters = 50;
inline constexpr int kResultMaxSections = 50;
inline constexpr int kResultMaxQna = 20;
inline constexpr int kResultMaxSegments = 1000;
inline constexpr int kWordsLimitMax = 5000;
inline constexpr int kWordsLimitDefault = 2000;
// Retry-After of a 409 not_ready for a transcription still processing (/timestamps, /transcript, /subtitles).
inline constexpr int kNotReadyRetryAfterSeconds = 15;
inline constexpr int kSearchQueryMin = 2;
inline constexpr int kSearchQueryMax = 200;
inline constexpr int kSearchLimitMin = 1;
inline constexpr int kSearchLimitMax = 100;
inline constexpr int kSearchLimitDefault = 20;
inline constexpr int kSearchOffsetMax = 1000;
inline constexpr int kSearchMaxTranscriptionIds = 50;
inline constexpr int kWebhookMaxAttempts = 5;
inline constexpr int kWebhookTimeoutSeconds = 10;
inline constexpr int kWebhookDisableAfterFailures = 5;
// Waits after the 1st, 2nd, ... failed attempt (1 min, 5 min, 30 min, 3 h, 12 h).
inline constexpr int kWebhookRetryDelaysSeconds[] = {60, 300, 1800, 10800, 43200};
inline constexpr int kSignatureToleranceSeconds = 300;
inline constexpr int kRegenerationsPerTranscription = 10;  // reset when an attempt completes
inline constexpr int kRefinePromptMaxLength = 200;         // characters; longer prompts are truncated
inline constexpr int kAskQuestionMaxChars = 500;           // code points, after trimming blanks
inline constexpr int kAskTopKMin = 10;
inline constexpr int kAskTopKMax = 100;
inline constexpr int kAskTopKDefault = 60;
inline constexpr int kAskMaxTranscriptionIds = 50;
inline constexpr int kAskBudgetSeconds = 75;  // beyond it: 500 internal_error naming qna_timeout, nothing saved
// Clips (spec, Limits: Clips).
inline constexpr double kClipMinSeconds = 1;
inline constexpr double kClipMaxSeconds = 60;
inline constexpr double kClipMaxSecondsWhereEnabled = 180;  // not enabled here: 400 feature_unavailable
inline constexpr int kClipWordsPerLineMin = 1;
inline constexpr int kClipWordsPerLineMax = 6;
inline constexpr int kClipWordsPerLineDefault = 3;
inline constexpr int kClipTitleMaxChars = 120;  // code points
inline constexpr int kClipsInProgressMax = 10;
inline constexpr int kSourceVideoDownloadsPerDay = 5;
inline constexpr int kClipListMax = 50;
inline constexpr int kClipWaitMinSeconds = 1;
inline constexpr int kClipWaitMaxSeconds = 45;
inline constexpr int kClipLinkTtlSeconds = 3600;
// A transcription's media link (GET .../media; SCRIBE_MEDIA_LINK_TTL_SECONDS
// shortens it for tests), and the Retry-After of its 409 while the media is
// not stored yet or its rendition is being made.
inline constexpr int kMediaLinkTtlSeconds = 3600;
inline constexpr int kMediaNotReadyRetryAfterSeconds = 2;
// Transcript revisions (domain/transcript_revision.h; our own decisions,
// documented in the OpenAPI document). A revision body is also bounded by
// kMaxJsonBodyBytes (413), which holds about ten hours of speech.
inline constexpr int kRevisionMaxCues = 12'000;
inline constexpr int kRevisionCueTextMaxChars = 1'000;            // code points, after trimming
inline constexpr std::size_t kRevisionMaxTextBytes = 900 * 1024;  // every cue's text together
inline constexpr int kRevisionMaxSpeakerNames = 100;
inline constexpr int kSpeakerNameMaxChars = 64;  // code points, after trimming
inline constexpr int kRevisionListMax = 100;     // GET .../revisions: the newest standing ones

// Not in the spec's table; our own decisions, documented in the OpenAPI document.
inline constexpr std::size_t kMaxJsonBodyBytes = 1 << 20;  // 413 above this
// Downloads of one clip file (GET /clips/files/{clipId}/{name}, every link to
// it together) that one server process sends at once: a browser opens at most
// 6 connections to a host, so one viewer seeking never needs more. One more
// is 429 rate_limited with retry_after kClipFileBusyRetryAfterSeconds.
inline constexpr int kClipFileDownloadsAtOnce = 6;
inline constexpr int kClipFileBusyRetryAfterSeconds = 1;
// The request head. A request target (path and query) longer than this is
// 414 URI Too Long; the header fields together (each counted as
// "name: value" plus CRLF) longer than kMaxHeaderFieldsBytes are 431 Request
// Header Fields Too Large. Both answer in the envelope (invalid_request) and
// close the connection. The parser stops reading a head at the sum of the two
// plus kRequestLineSlackBytes (method, version, separators).
inline constexpr std::size_t kMaxRequestTargetBytes = 8 * 1024;
inline constexpr std::size_t kMaxHeaderFieldsBytes = 16 * 1024;
inline constexpr std::size_t kRequestLineSlackBytes = 64;
// Failed authentications (a Bearer token that is refused with 401) from one
// client address, per process: beyond this many a minute (GCRA, burst of the
// same size) the address's requests with a token this process has not
// authenticated before are 429 rate_limited with Retry-After, without a
// database read. Keys this process has authenticated keep working.
inline constexpr int kAuthFailuresPerMinute = 20;
// A well-formed API key found unknown is refused from memory for this long,
// with no database read (a new key is random: it is never unknown first).
inline constexpr int kUnknownKeyCacheSeconds = 60;
inline constexpr int kApiKeyNameMaxLength = 100;
// An unfinished tus upload may be resumed this long after its creation
// (Upload-Expires); the 3600 s of the spec bound the ticket, not the upload.
inline constexpr int kResumableUploadTtlSeconds = 24 * 3600;
// Search counts matches exactly up to this many and reports this many when
// there are more: an exact count of a substring found in a few percent of a
// million segments costs a scan of tens of thousands of them. `has_more` is
// exact regardless (the page query looks one hit ahead).
inline constexpr int kSearchTotalCap = 1'000;
// Asks (POST .../ask, POST /api/v1/ask) and regenerations (POST
// .../timestamps/regenerate) compute on a request thread for up to a minute or
// more; an account may have this many of them running at once in a server
// process (all its keys together). One more is 429 rate_limited with reason
// long_requests_in_flight and this retry_after.
inline constexpr int kLongRequestsInFlightPerAccount = 2;
inline constexpr int kLongRequestsRetryAfterSeconds = 5;
// POST /v1/audio/transcriptions (OpenAI-compatible, api/openai/): the
// multipart body may exceed the file's kMaxUploadBytes by this much (its form
// fields, at most 64 of 64 KiB, and part headers); a Content-Length over the
// sum is 413 before any byte is read. The staging file of an upload that never
// finished is swept this long after it began. The connection waiting for the
// transcription checks it (and a stream sends a keep-alive comment) every
// kOpenAiWaitSliceSeconds. Without an Idempotency-Key, a repeat of the same
// upload is answered by the first transcription while it runs and for
// kOpenAiDedupeSecondsDefault after it finished (SCRIBE_OPENAI_DEDUPE_SECONDS).
inline constexpr int64_t kMaxMultipartOverheadBytes = 5 * 1024 * 1024;
inline constexpr int kOpenAiStagingTtlSeconds = 24 * 3600;
inline constexpr int kOpenAiWaitSliceSeconds = 15;
inline constexpr int kOpenAiDedupeSecondsDefault = 900;

// OAuth 2.1 (issue 31; domain/oauth.h, api/oauth/). Lifetimes: an
// authorization code, an access token, a refresh token (each rotation starts
// a new one), the grace in which a rotated refresh token presented again is a
// client's concurrent retry rather than a replay, a browser sign-in session
// of the /oauth pages, and how long a client may go unused before it is
// deleted (a DCR client then registers again).
inline constexpr int kOAuthCodeTtlSeconds = 60;
inline constexpr int kOAuthAccessTokenTtlSeconds = 3600;
inline constexpr int kOAuthRefreshTokenTtlSeconds = 30 * 24 * 3600;
inline constexpr int kOAuthRefreshGraceSeconds = 10;
inline constexpr int kOAuthBrowserSessionSeconds = 12 * 3600;
inline constexpr int kOAuthClientUnusedDays = 30;
// A client's last use is recorded (a ClientUsed event) at most once this often.
inline constexpr int kOAuthClientUsedEverySeconds = 24 * 3600;
// POST /oauth/register per client address (GCRA, the API's limiter).
inline constexpr int kOAuthRegistrationsPerMinute = 10;
// Failed sign-ins on the /oauth pages: this many per client address and per
// email in the window; one more is 429 until the oldest leaves the window.
inline constexpr int kOAuthSignInFailuresMax = 10;
inline constexpr int kOAuthSignInWindowSeconds = 15 * 60;
// Client metadata (DCR bodies and CIMD documents).
inline constexpr int kOAuthMaxRedirectUris = 10;
inline constexpr std::size_t kOAuthRedirectUriMaxLength = 2048;
inline constexpr std::size_t kOAuthClientIdMaxLength = 2048;
inline constexpr int kOAuthClientNameMaxChars = 200;  // code points
inline constexpr std::size_t kOAuthRegistrationMaxBytes = 16 * 1024;
// Client ID Metadata Documents: fetched at most this large, in this time,
// cached by Cache-Control max-age within [min, max] (default when absent).
inline constexpr std::size_t kOAuthCimdMaxBytes = 5 * 1024;
inline constexpr int kOAuthCimdTimeoutSeconds = 5;
inline constexpr int kOAuthCimdCacheMinSeconds = 60;
inline constexpr int kOAuthCimdCacheMaxSeconds = 24 * 3600;
inline constexpr int kOAuthCimdCacheDefaultSeconds = 3600;
// Passwords (scrypt, N = 2^kPasswordScryptLog2N, r = 8, p = 1).
inline constexpr int kPasswordMinChars = 10;
inline constexpr int kPasswordMaxBytes = 1024;
inline constexpr int kPasswordScryptLog2N = 15;
inline constexpr int kPasswordScryptMinLog2N = 10;  // the test-only setting's floor
// The web console's request budget (issue 36): requests made with the
// first-party console's access tokens count against a bucket of their own
// per account ("console:<account>"), apart from the account's API keys (one
// bucket each) and its other apps (one bucket per user), so a person's agents
// and their console never starve each other. GCRA like kRequestsPerMinute,
// burst of the same size; operators may change it
// (SCRIBE_CONSOLE_RATE_LIMIT_PER_MINUTE). Sized for a reader opening a
// 12-hour transcript (about 20 pages of words and 15 of segments at once)
// beside the library's long-polls.
inline constexpr int kConsoleRequestsPerMinute = 600;
// GET /dashboard/api/v1/keys/{id}/webhook/deliveries: the newest this many.
inline constexpr int kDashboardDeliveriesListed = 20;

}  // namespace scribe::limits
