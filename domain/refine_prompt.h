#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The `refine_prompt` of POST .../timestamps/regenerate: a short steer for
// the extractive choice (its content words pull chapters toward the sections
// that say them). It is text a chat model may also see when the optional
// chat adapter is configured, so instructions aimed at a model are refused.
namespace scribe::refine_prompt {

// The markers refused, matched in the prompt's folded form (compatibility
// forms such as fullwidth letters and ligatures as their ASCII, case folded,
// any run of whitespace, Unicode spaces included, as one space, invisible
// characters dropped or taken as a space): a marker made of words as whole
// words ("act as" is not in "the fact as stated"), a delimiter anywhere.
// Documented in the OpenAPI document under the regenerate endpoint.
const std::vector<std::string_view>& injection_markers();

// The marker `prompt` carries, or nullopt when it carries none.
std::optional<std::string> injection_marker(std::string_view prompt);

// `prompt` cut to at most `max_chars` code points (never inside a UTF-8
// sequence), then trimmed of blanks; nullopt when nothing is left.
std::optional<std::string> normalize(std::string_view prompt, std::size_t max_chars);

}  // namespace scribe::refine_prompt
