// GET /api/v1/transcriptions/{id}/timestamps and POST .../timestamps/regenerate:
// paste-ready chapter text rendered from the posting-chapters cache, the
// chapters or the sections (domain/posting_formats.h holds every platform
// rule), and the regeneration of that cache.
#include "api/caller.h"
#include "api/enrichment_rows.h"
#include "api/handlers/handlers.h"
#include "api/params.h"
#include "api/services.h"
#include "api/transcription_view.h"
#include "commands/enrichment_commands.h"
#include "common/error.h"
#include "domain/limits.h"
#include "domain/posting_formats.h"
#include "domain/refine_prompt.h"
#include "domain/transcription.h"
#include "enrichment/artifact_store.h"
#include "enrichment/enricher.h"

namespace scribe::api {
namespace {

const Json kAvailableStyles = Json::array({"balanced"});

// The transcription's fields the two endpoints need, from its read model.
struct Target {
  std::string status;
  std::string title;
  double duration_seconds = 0;
  LinkSource link;
};

Target load_target(pqxx::transaction_base& txn, const RequestContext& ctx, int64_t id) {
  auto body = load_transcription(txn, ctx.caller().account_id, id);
  if (!body) throw Error::not_found("transcription");
  Target t;
  t.status = (*body)["status"].get<std::string>();
  if ((*body)["title"].is_string()) t.title = (*body)["title"].get<std::string>();
  if ((*body)["duration_seconds"].is_number()) t.duration_seconds = (*body)["duration_seconds"].get<double>();
  t.link = LinkSource::of(*body, ctx.services.config.public_url);
  return t;
}

// 409 not_ready, with the extras /timestamps adds to every reason.
[[noreturn]] void not_ready(const Error& e, const std::string& style, const std::string& variant) {
  Json extras = e.extras();
  extras["available_styles"] = kAvailableStyles;
  extras["requested_style"] = style;
  extras["variant"] = variant;
  throw Error(e.code(), e.message(), extras);
}

std::vector<posting::Item> cache_items(const Json& cache, const std::string& variant, const LinkSource& link) {
  const auto p = enrichment::posting_from_json(cache);
  const auto& list = variant == "standard"     ? p.standard
                     : variant == "highlights" ? p.highlights
                     : variant == "clips"      ? p.clips
                                               : p.quoted_sections;
  std::vector<posting::Item> items;
  for (const auto& i : list) items.push_back({i.start, i.title, i.quote, std::nullopt, link.at_seconds(i.start)});
  return items;
}

std::vector<posting::Item> row_items(const std::vector<TimedRow>& rows, const LinkSource& link) {
  std::vector<posting::Item> items;
  for (const auto& r : rows)
    items.push_back({r.start_seconds, r.title, std::nullopt, r.summary, link.at_seconds(r.start_seconds)});
  return items;
}

}  // namespace

Response TimestampsHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  QueryParams q(ctx.req);
  const std::string format = q.string("format", 64).value_or("video_site");
  if (posting::is_legacy_format(format))
    throw Error::invalid("format", "format=" + format + " is no longer a format; use variant=" +
                                       (format == "clip_ideas" ? std::string("clips") : format) +
                                       " (the format is then ignored for show_notes and original)");
  if (!posting::is_format(format))
    throw Error::invalid("format",
                         "format must be one of video_site, audio_app_a, audio_app_b, markdown, short_post, "
                         "thread_post, photo_caption, professional_post, plain");
  const std::string variant =
      q.one_of("variant", {"standard", "highlights", "clips", "quoted_sections", "show_notes", "original"}, "standard");
  const bool cta = q.boolean("cta", false);
  // Deprecated and ignored: any value is taken as `balanced`, the only style.
  const std::string style = q.string("style", 64).value_or("balanced");
  const bool from_cache = variant != "show_notes" && variant != "original";

  Target target;
  EnrichmentState state;
  std::vector<posting::Item> items;
  {
    pqxx::read_transaction txn(ctx.db());
    target = load_target(txn, ctx, id);
    try {
      transcription::require_completed(target.status);
    } catch (const Error& e) {
      not_ready(e, style, variant);
    }
    state = load_enrichment_state(txn, id);
    const bool rows_ok = state.present && state.state == "ok";
    if (from_cache ? !state.posting.has_value() : !rows_ok)
      not_ready(Error("not_ready",
                      from_cache ? "the posting-chapters cache of this transcription was never generated; call POST "
                                   ".../timestamps/regenerate once, then retry"
                                 : "the " + std::string(variant == "original" ? "sections" : "chapters") +
                                       " of this transcription were never generated; call POST "
                                       ".../timestamps/regenerate once, then retry",
                      {{"reason", "artifact_missing"}, {"status", target.status}}),
                style, variant);
    if (from_cache) items = cache_items(*state.posting, variant, target.link);
    else if (variant == "show_notes") items = row_items(load_chapter_rows(txn, id, "chapter"), target.link);
    else items = row_items(load_section_rows(txn, id), target.link);
  }
  ctx.release_db();

  posting::RenderRequest req;
  req.format = format;
  req.variant = variant;
  req.cta = cta;
  req.items = std::move(items);
  req.duration_seconds = target.duration_seconds;
  req.title = target.title;
  const posting::Rendered r = posting::render(req);

  Json body = {{"format", format},
               {"variant", variant},
               {"style", from_cache ? Json("balanced") : Json(nullptr)},
               {"text", r.text},
               {"char_count", r.char_count},
               {"items_used", r.items_used},
               {"items_total", r.items_total},
               {"truncated", r.truncated},
               {"ok_to_paste", r.ok_to_paste},
               {"warnings", r.warnings}};
  if (r.thread) body["thread"] = *r.thread;
  if (r.constraints) body["constraints"] = *r.constraints;
  body["source"] = {{"kind", from_cache                ? "posting_chapters"
                             : variant == "show_notes" ? "chapters_summary"
                                                       : "raw_sections"},
                    {"generated_at", from_cache ? state.posting_generated_at : state.generated_at},
                    {"model", variant == "original" ? Json(nullptr) : Json("standard")},
                    {"regen_count", state.regen_count},
                    {"available_styles", kAvailableStyles}};
  return Response::json(200, body);
}

Response RegenerateTimestampsHandler::handle(RequestContext& ctx) {
  const int64_t id = ctx.id_param("id", "transcription");
  auto b = JsonBody::parse(ctx.req, true);
  // Deprecated: any style is coerced to `balanced`, the only one.
  (void)b.string("style", false, 0, 64);
  std::optional<std::string> prompt;
  if (b.has("refine_prompt") && !b.raw()["refine_prompt"].is_null()) {
    auto raw = b.string("refine_prompt", false, 0, 64 * 1024);
    if (auto marker = refine_prompt::injection_marker(*raw))
      throw Error::invalid("refine_prompt", "refine_prompt carries '" + *marker +
                                                "', which reads as an instruction to a model; describe what the "
                                                "chapters should emphasise instead");
    prompt = refine_prompt::normalize(*raw, limits::kRefinePromptMaxLength);
  }
  const commands::Caller caller = caller_of(ctx);
  // Refused (404, 409, 429) before any work; decided again at the append.
  const transcription::State checked = commands::check_regeneration(ctx.db(), caller, id);

  Target target;
  transcript::TranscriptArtifact transcript;
  std::vector<enrichment::Section> sections;
  EnrichmentState state;
  {
    pqxx::read_transaction txn(ctx.db());
    target = load_target(txn, ctx, id);
    state = load_enrichment_state(txn, id);
    transcript = load_transcript(txn, id);
    // The recording's length, not only its last segment's end.
    if (target.duration_seconds > 0) transcript.duration_seconds = target.duration_seconds;
    if (state.present && state.state == "ok") sections = load_sections(txn, id, transcript);
  }
  ctx.release_db();
  Json refs = Json::object();
  if (sections.empty() && !transcript.segments.empty()) {
    // The completion's enrichment is missing (or its sections do not match
    // the transcript): compute all of it again, so /result recovers too.
    auto full = enrichment::enrich_transcript(transcript);
    // Without a prompt, enrich() already made the very cache posting_chapters() would.
    if (prompt) full.posting = enrichment::posting_chapters(transcript, full.sections, prompt);
    full.posting.refine_prompt = prompt;
    refs["enrichment"] = enrichment::store_artifact(id, checked.attempt, full);
    refs["posting"] = enrichment::store_posting(id, full.posting);
  } else {
    auto cache = enrichment::posting_chapters(transcript, sections, prompt);
    cache.refine_prompt = prompt;
    refs["posting"] = enrichment::store_posting(id, cache);
  }
  const auto recorded =
      commands::record_regeneration(ctx.services.store, ctx.db(), caller, id, checked.attempt, prompt, refs);
  {
    // The cache as the append's projection wrote it, with its generated_at.
    pqxx::read_transaction txn(ctx.db());
    state = load_enrichment_state(txn, id);
  }
  const Json cache = posting_chapters_json(state, target.link);
  return Response::json(
      200,
      {{"regenerated", true},
       {"regen_count", recorded.regen_count},
       {"regen_limit", limits::kRegenerationsPerTranscription},
       {"regen_remaining", limits::kRegenerationsPerTranscription - recorded.regen_count},
       {"style", "balanced"},
       {"refine_prompt", prompt ? Json(*prompt) : Json(nullptr)},
       {"available_styles", kAvailableStyles},
       {"posting_chapters", cache.value("standard", Json::object()).value("balanced", Json())},
       {"posting_chapters_highlights", cache.value("highlights", Json::object()).value("balanced", Json())},
       {"posting_chapters_clips", cache.value("clips", Json::object()).value("balanced", Json())},
       {"posting_chapters_quoted_sections", cache.value("quoted_sections", Json::object()).value("balanced", Json())}});
}

}  // namespace scribe::api
