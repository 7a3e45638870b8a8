#include "domain/refine_prompt.h"

#include "common/text.h"
#include "common/unicode_fold.h"

namespace scribe::refine_prompt {

const std::vector<std::string_view>& injection_markers() {
  // Phrases that address a model rather than describe what to emphasise,
  // and the delimiters chat templates use to fake a new turn.
  static const std::vector<std::string_view> markers = {"ignore previous",
                                                        "ignore all previous",
                                                        "ignore the above",
                                                        "ignore your instructions",
                                                        "disregard previous",
                                                        "disregard the above",
                                                        "disregard all",
                                                        "forget your instructions",
                                                        "forget previous",
                                                        "new instructions",
                                                        "system prompt",
                                                        "system:",
                                                        "assistant:",
                                                        "you are now",
                                                        "act as",
                                                        "pretend to be",
                                                        "developer mode",
                                                        "jailbreak",
                                                        "do anything now",
                                                        "override",
                                                        "<|",
                                                        "|>",
                                                        "[inst]",
                                                        "[/inst]",
                                                        "<<sys>>",
                                                        "</s>",
                                                        "```",
                                                        "###"};
  return markers;
}

namespace {

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A marker made of words matches whole words only ("act as" is not in "the
// fact as stated"); delimiters match anywhere.
bool contains_marker(const std::string& text, std::string_view m) {
  for (auto at = text.find(m); at != std::string::npos; at = text.find(m, at + 1)) {
    const bool starts_word = is_word_char(m.front()), ends_word = is_word_char(m.back());
    if (starts_word && at > 0 && is_word_char(text[at - 1])) continue;
    if (ends_word && at + m.size() < text.size() && is_word_char(text[at + m.size()])) continue;
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> injection_marker(std::string_view prompt) {
  // A model reads through spacing and spelling: "ignore<NBSP>previous",
  // "ignore\n\tprevious", "ｉｇｎｏｒｅ previous" and "ig<ZWSP>nore previous"
  // are all the marker. So the prompt is matched in its folded form
  // (common/unicode_fold.h: compatibility forms to ASCII, case folded, every
  // whitespace run one space), twice: with invisible characters dropped (one
  // inside a word) and with them as spaces (one between two words, which a
  // reader sees as run together or apart, depending on the renderer).
  const std::string dropped = unicode::fold(prompt, unicode::Invisible::kDrop);
  const std::string spaced = unicode::fold(prompt, unicode::Invisible::kSpace);
  for (auto m : injection_markers())
    if (contains_marker(dropped, m) || contains_marker(spaced, m)) return std::string(m);
  return std::nullopt;
}

std::optional<std::string> normalize(std::string_view prompt, std::size_t max_chars) {
  std::size_t i = 0, chars = 0;
  while (i < prompt.size() && chars < max_chars) {
    const unsigned char c = static_cast<unsigned char>(prompt[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    if (i + len > prompt.size()) break;
    i += len;
    ++chars;
  }
  std::string out(trim(prompt.substr(0, i)));
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace scribe::refine_prompt
