#include "enrichment/heard_terms.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "enrichment/text.h"
#include "lexicon/sound_alike.h"
#include "lexicon/wordnet.h"

namespace scribe::enrichment {
namespace {

// What a variant counts against the question's own word, times the
// lexicon's weight for it. A word that sounds like the asked one is the
// recognizer's likely mistake; one that means the same is a paraphrase the
// speaker may have used. Both count below the word itself so that a
// transcript with the word wins; chosen on the tune set of bench/ask_eval.
constexpr double kSoundFactor = 0.6;
constexpr double kMeaningFactor = 0.6;
// Per question word: how many of each to try. The recognizer's dictionary
// is mostly names, so the sound-alikes a transcript can hold are far down
// its list ("carl" is the 50th of "coral"); only those found in the scope
// count, and each costs a lexeme in the retrieval's query.
constexpr int kSoundAlikesPerWord = 60;
constexpr int kMeaningAlikesPerWord = 6;
// Words shorter than this have too many sound-alikes to say anything.
constexpr std::size_t kSoundMinLetters = 3;
// The heard search keeps only sound-alikes at least this strong.
constexpr double kSearchSoundMinWeight = 0.5;
constexpr int kSearchSoundAlikes = 60;

}  // namespace

HeardMatching parse_heard_matching(const std::string& text) {
  HeardMatching m{false, false, false};
  std::stringstream in(text);
  std::string item;
  bool none = false, any = false;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item == "alternates") m.alternates = any = true;
    else if (item == "sound") m.sound_alikes = any = true;
    else if (item == "meaning") m.meaning_alikes = any = true;
    else if (item == "none") none = true;
    else throw std::invalid_argument("'" + item + "' is none of alternates, sound, meaning, none");
  }
  if (none && any) throw std::invalid_argument("'none' cannot be combined with other ways");
  if (!none && !any) throw std::invalid_argument("empty; give alternates, sound, meaning or none");
  return m;
}

std::string heard_matching_text(const HeardMatching& m) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(m.alternates, "alternates");
  add(m.sound_alikes, "sound");
  add(m.meaning_alikes, "meaning");
  return out.empty() ? "none" : out;
}

std::vector<VariantWord> variant_words(const std::vector<std::vector<std::string>>& surface,
                                       const HeardMatching& matching) {
  std::vector<VariantWord> out;
  for (std::size_t t = 0; t < surface.size(); ++t) {
    // By word, the strongest way it was reached.
    std::map<std::string, VariantWord> best;
    auto offer = [&](const std::string& word, double factor, Match how) {
      if (word.empty() || factor <= 0 || is_stop_word(word)) return;
      if (std::find(surface[t].begin(), surface[t].end(), word) != surface[t].end()) return;
      auto [it, fresh] = best.try_emplace(word, VariantWord{t, word, factor, how});
      if (!fresh && factor > it->second.factor) it->second = VariantWord{t, word, factor, how};
    };
    for (const auto& w : surface[t]) {
      if (matching.sound_alikes && w.size() >= kSoundMinLetters)
        for (const auto& s : lexicon::sound_alikes(w, kSoundAlikesPerWord))
          offer(s.word, kSoundFactor * s.weight, Match::sound_alike);
      if (matching.meaning_alikes)
        for (const auto& m : lexicon::meaning_alikes(w, kMeaningAlikesPerWord)) {
          // Multiword lemmas ("ice cream") are not one lexeme; skip them.
          if (m.word.find(' ') != std::string::npos) continue;
          offer(m.word, kMeaningFactor * m.weight, Match::meaning_alike);
        }
    }
    std::vector<VariantWord> mine;
    for (auto& [_, v] : best) mine.push_back(std::move(v));
    std::sort(mine.begin(), mine.end(), [](const VariantWord& a, const VariantWord& b) {
      return a.factor != b.factor ? a.factor > b.factor : a.word < b.word;
    });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

std::vector<VariantWord> search_sound_alikes(const std::string& word) {
  std::vector<VariantWord> out;
  if (word.size() < kSoundMinLetters || is_stop_word(word)) return out;
  for (const auto& s : lexicon::sound_alikes(word, kSearchSoundAlikes))
    if (s.weight >= kSearchSoundMinWeight && !is_stop_word(s.word))
      out.push_back({0, s.word, s.weight, Match::sound_alike});
  return out;
}

}  // namespace scribe::enrichment
