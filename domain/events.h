#pragma once

// Event type names: facts in the past tense. Payloads are JSON objects whose
// fields are documented where each event is decided.
namespace scribe::events {

inline constexpr const char* kAccountOpened = "AccountOpened";      // {account_id, email, plan}
inline constexpr const char* kPlanChanged = "PlanChanged";          // {account_id, from, to}
inline constexpr const char* kWalletDeposited = "WalletDeposited";  // {account_id, amount_micros, reference}
inline constexpr const char* kApiKeyCreated = "ApiKeyCreated";
// {account_id, key_id, name, key_hash, key_prefix, permission, monthly_cap_micros|null, expires_at|null}
inline constexpr const char* kApiKeyRevoked = "ApiKeyRevoked";  // {account_id, key_id}

// Wallet holds, on the account stream (see domain/wallet.h).
inline constexpr const char* kWalletHoldPlaced = "WalletHoldPlaced";
// {account_id, hold_id, amount_micros, key_id|null, month "YYYY-MM", purpose, transcription_id}
inline constexpr const char* kWalletHoldSettled = "WalletHoldSettled";
// {account_id, hold_id, charged_micros, released_micros, key_id|null, hold_month, month}
inline constexpr const char* kWalletHoldReleased = "WalletHoldReleased";
// {account_id, hold_id, amount_micros, key_id|null, hold_month}

}  // namespace scribe::events

namespace scribe::events {

// Transcription stream (domain/transcription.h).
inline constexpr const char* kTranscriptionQuoted = "TranscriptionQuoted";
inline constexpr const char* kTranscriptionCreated = "TranscriptionCreated";
inline constexpr const char* kTranscriptionRetried = "TranscriptionRetried";
inline constexpr const char* kTranscriptionStageChanged = "TranscriptionStageChanged";  // {stage, attempt}
inline constexpr const char* kTranscriptionCompleted = "TranscriptionCompleted";
inline constexpr const char* kTranscriptionFailed = "TranscriptionFailed";  // {attempt, error{code,message}}
inline constexpr const char* kTranscriptionDeleted = "TranscriptionDeleted";
// Account stream: a job was accepted (fair-use accounting; no money moves).
inline constexpr const char* kTranscriptionAccepted = "TranscriptionAccepted";
// {account_id, transcription_id, attempt, billed_seconds, accepted_at}
// Account stream: the worker measured the recording and the attempt's billed
// seconds in the fair-use window now follow the measured length.
inline constexpr const char* kAcceptedSecondsCorrected = "AcceptedSecondsCorrected";
// {account_id, transcription_id, attempt, billed_seconds, previous_billed_seconds}
// Transcription stream: the worker measured the recording before recognizing
// it (domain/measurement.h); the attempt's hold now covers that length.
inline constexpr const char* kTranscriptionMeasured = "TranscriptionMeasured";
// {transcription_id, attempt, duration_seconds, billed_seconds, charge_micros, hold_id|null}
// Transcription stream: the posting-chapters cache of a completed
// transcription was regenerated (POST .../timestamps/regenerate). `posting`
// references the new cache object (domain/enrichment_artifact.h); `enrichment`
// is present when the whole enrichment was recomputed because the
// completion's was missing.
inline constexpr const char* kPostingChaptersRegenerated = "PostingChaptersRegenerated";
// {transcription_id, attempt, regen_count, refine_prompt|null, posting{key, sha256}, enrichment?{key, sha256}}
// Revision stream `revisions-<transcription_id>` (domain/transcript_revision.h).
inline constexpr const char* kTranscriptRevisionSaved = "TranscriptRevisionSaved";
// {transcription_id, account_id, revision, base_revision|null, cues[{id, start_ms, end_ms, text, speaker|null}],
//  speaker_names{label: name}, created_at}
inline constexpr const char* kTranscriptRevisionUndone = "TranscriptRevisionUndone";
// {transcription_id, account_id, revision, current_revision|null, undone_at}

}  // namespace scribe::events

namespace scribe::events {

// Webhook stream, one per API key (domain/webhook.h).
inline constexpr const char* kWebhookRegistered = "WebhookRegistered";
// {account_id, key_id, webhook_id, url, events[], replaced_webhook_id|null}
inline constexpr const char* kWebhookRevoked = "WebhookRevoked";  // {account_id, key_id, webhook_id}
inline constexpr const char* kWebhookTestRequested = "WebhookTestRequested";
// {account_id, key_id, webhook_id, message}

}  // namespace scribe::events

namespace scribe::events {

// Ask (domain/ask.h). Allowance stream `asks-<account_id>`: one per saved
// answer, never redacted, so a redacted entry still counts.
inline constexpr const char* kQuestionAsked = "QuestionAsked";
// {account_id, qna_id, transcription_id|null, key_id|null, asked_at}
// Entry stream `qna-<qna_id>`: the saved question and answer, then, on
// DELETE, its redaction (after which every event of the stream keeps ids only).
inline constexpr const char* kQuestionAnswered = "QuestionAnswered";
// {qna_id, account_id, transcription_id|null, key_id|null, question, answer, citations[], model, asked_at}
inline constexpr const char* kQuestionRedacted = "QuestionRedacted";  // {qna_id, account_id, transcription_id|null}

}  // namespace scribe::events

namespace scribe::events {

// Clips (domain/clip.h). Account stream: a clip was accepted (its hold's
// events follow); video_download says it starts a new source-video download.
inline constexpr const char* kClipAccepted = "ClipAccepted";
// {account_id, clip_id, transcription_id, video_download, accepted_at}
// Clip stream `clip-<id>`.
inline constexpr const char* kClipRequested = "ClipRequested";  // see clip::requested()
inline constexpr const char* kClipCompleted = "ClipCompleted";
// {clip_id, account_id, transcription_id, key_id|null, callback_url|null, charge_micros, clip{view}}
inline constexpr const char* kClipFailed = "ClipFailed";
// {clip_id, account_id, transcription_id, key_id|null, callback_url|null, error{code,message}, clip{view}}

}  // namespace scribe::events

namespace scribe::events {

// OAuth (domain/oauth.h). Client stream `oauth-client-<client_id>`.
inline constexpr const char* kOAuthClientRegistered = "ClientRegistered";
// {client_id, kind "dcr"|"cimd", client_name|null, redirect_uris[], application_type}
inline constexpr const char* kOAuthClientUsed = "ClientUsed";        // {client_id} (at most one a day)
inline constexpr const char* kOAuthClientExpired = "ClientExpired";  // {client_id} (unused for 30 days)
// Grant stream `oauth-grant-<grant_id>`: an authorization that reached the token endpoint.
inline constexpr const char* kOAuthGrantIssued = "GrantIssued";  // {grant_id, account_id, client_id, resources[]}
inline constexpr const char* kOAuthGrantRevoked = "GrantRevoked";
// {grant_id, account_id, client_id, reason "user"|"code_reuse"|"refresh_reuse"|"client"|"admin"}
// Account's consent stream `oauth-consents-<account_id>`.
inline constexpr const char* kOAuthConsentGiven = "ConsentGiven";          // {account_id, client_id}
inline constexpr const char* kOAuthConsentWithdrawn = "ConsentWithdrawn";  // {account_id, client_id}

}  // namespace scribe::events

namespace scribe::events {

// Realtime sessions (domain/realtime.h), on the account stream.
inline constexpr const char* kRealtimeSessionStarted = "RealtimeSessionStarted";
// {account_id, session_id, key_id|null, transcription_id, language, cap_minutes, plan, hold_id|null,
//  held_micros, started_at} (the hold's WalletHoldPlaced follows, purpose "realtime")
inline constexpr const char* kRealtimeSessionEndRequested = "RealtimeSessionEndRequested";
// {account_id, session_id, reason}
inline constexpr const char* kRealtimeSessionEnded = "RealtimeSessionEnded";
// {account_id, session_id, transcription_id, reason, audio_samples, billed_seconds, charge_micros, ended_at}
// (the hold's WalletHoldSettled or WalletHoldReleased is appended with it)
inline constexpr const char* kApiKeyRealtimeGranted = "ApiKeyRealtimeGranted";  // {account_id, key_id}
inline constexpr const char* kApiKeyRealtimeRevoked = "ApiKeyRealtimeRevoked";  // {account_id, key_id}
// The account's own flag: the first-party console's sign-in may start sessions.
inline constexpr const char* kAccountRealtimeGranted = "AccountRealtimeGranted";  // {account_id}
inline constexpr const char* kAccountRealtimeRevoked = "AccountRealtimeRevoked";  // {account_id}
// Transcription stream of a realtime session: created live (status
// processing, stage live, source realtime, no job, no hold of its own:
// prepaid by the session's hold) ...
inline constexpr const char* kTranscriptionLiveStarted = "TranscriptionLiveStarted";
// {transcription_id, account_id, key_id|null, session_id, source "realtime", language, pipeline_code, title|null}
// ... then, once the session ended with audio, its job is queued on the joined recording ...
inline constexpr const char* kTranscriptionLiveRecorded = "TranscriptionLiveRecorded";
// {transcription_id, account_id, session_id, attempt 1, duration_seconds, billed_seconds, charge_micros}
// ... or, with none, it is cancelled.
inline constexpr const char* kTranscriptionCancelled = "TranscriptionCancelled";
// {transcription_id, account_id, reason}
// Transcription stream: the original video of an upload was added (POST
// .../video; domain/media_playback.h), kept at clip::source_video_key for
// video clips and the player.
inline constexpr const char* kTranscriptionVideoAdded = "TranscriptionVideoAdded";
// {transcription_id, account_id, upload_id, video_duration_seconds, added_at}

}  // namespace scribe::events
