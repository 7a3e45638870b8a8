#include "lexicon/pronunciations.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "common/log.h"

namespace scribe::lexicon {
namespace {

// The 39 phones of the CMU dictionary; vowels first.
constexpr const char* kNames[kPhones] = {"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY",
                                         "UH", "UW", "B",  "CH", "D",  "DH", "F",  "G",  "HH", "JH", "K",  "L",  "M",
                                         "N",  "NG", "P",  "R",  "S",  "SH", "T",  "TH", "V",  "W",  "Y",  "Z",  "ZH"};
constexpr Phone kFirstConsonant = 15;

std::mutex g_mu;
std::string g_path = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";

}  // namespace

const char* phone_name(Phone p) { return p < kPhones ? kNames[p] : "?"; }

std::optional<Phone> phone_of(std::string_view arpabet) {
  std::string up;
  for (char c : arpabet)
    if (std::isalpha(static_cast<unsigned char>(c)))
      up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int i = 0; i < kPhones; ++i)
    if (up == kNames[i]) return static_cast<Phone>(i);
  return std::nullopt;
}

bool is_vowel(Phone p) { return p < kFirstConsonant; }

Pronunciations Pronunciations::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the pronunciation dictionary " + path);
  Pronunciations out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string word, phone;
    if (!(fields >> word)) continue;
    if (auto paren = word.find('('); paren != std::string::npos) word.erase(paren);
    bool letters = !word.empty();
    for (char& c : word) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      letters = letters && (std::isalpha(static_cast<unsigned char>(c)) || c == '\'');
    }
    if (!letters) continue;
    Pronunciation p{word, {}};
    bool ok = true;
    while (fields >> phone) {
      if (phone == "#") break;  // a comment
      auto ph = phone_of(phone);
      if (!ph) {
        ok = false;
        break;
      }
      p.phones.push_back(*ph);
    }
    if (ok && !p.phones.empty()) out.entries_.push_back(std::move(p));
  }
  out.by_word_.resize(out.entries_.size());
  for (std::uint32_t i = 0; i < out.by_word_.size(); ++i) out.by_word_[i] = i;
  std::stable_sort(out.by_word_.begin(), out.by_word_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return out.entries_[a].word < out.entries_[b].word; });
  for (std::uint32_t i = 0; i < out.entries_.size(); ++i) {
    const std::size_t n = out.entries_[i].phones.size();
    if (out.by_length_.size() <= n) out.by_length_.resize(n + 1), out.phones_by_length_.resize(n + 1);
    out.by_length_[n].push_back(i);
    auto& flat = out.phones_by_length_[n];
    flat.insert(flat.end(), out.entries_[i].phones.begin(), out.entries_[i].phones.end());
  }
  return out;
}

std::vector<const Pronunciation*> Pronunciations::of(std::string_view word) const {
  std::vector<const Pronunciation*> out;
  auto it = std::lower_bound(by_word_.begin(), by_word_.end(), word,
                             [&](std::uint32_t i, std::string_view w) { return entries_[i].word < w; });
  for (; it != by_word_.end() && entries_[*it].word == word; ++it) out.push_back(&entries_[*it]);
  return out;
}

const std::vector<std::uint32_t>& Pronunciations::with_length(std::size_t n) const {
  static const std::vector<std::uint32_t> none;
  return n < by_length_.size() ? by_length_[n] : none;
}

const std::vector<Phone>& Pronunciations::phones_with_length(std::size_t n) const {
  static const std::vector<Phone> none;
  return n < phones_by_length_.size() ? phones_by_length_[n] : none;
}

void configure_pronunciations(std::string dict_path) {
  std::lock_guard lock(g_mu);
  g_path = std::move(dict_path);
}

const Pronunciations* pronunciations() {
  // Loaded once: about 135,000 lines, a few hundred milliseconds.
  static const Pronunciations* loaded = [] {
    std::string path;
    {
      std::lock_guard lock(g_mu);
      path = g_path;
    }
    try {
      return new Pronunciations(Pronunciations::load(path));
    } catch (const std::exception& e) {
      log::warn("sound-alike matching is off: the recognizer's dictionary could not be read",
                {{"path", path}, {"error", e.what()}});
      return static_cast<Pronunciations*>(nullptr);
    }
  }();
  return loaded;
}

}  // namespace scribe::lexicon
