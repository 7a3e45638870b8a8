#include "lexicon/sound_alike.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace scribe::lexicon {
namespace {

// Phone classes for the costs. Vowels by where they are made; consonants by
// manner, with voicing pairs apart (a recognizer confuses "p" and "b" far more
// than "p" and "s").
enum class Kind { front_vowel, central_vowel, back_vowel, diphthong, stop, fricative, affricate, nasal, liquid, glide };

Kind kind(Phone p) {
  const std::string n = phone_name(p);
  if (n == "IY" || n == "IH" || n == "EH" || n == "AE" || n == "EY") return Kind::front_vowel;
  if (n == "AH" || n == "ER") return Kind::central_vowel;
  if (n == "AA" || n == "AO" || n == "UH" || n == "UW" || n == "OW") return Kind::back_vowel;
  if (n == "AW" || n == "AY" || n == "OY") return Kind::diphthong;
  if (n == "P" || n == "B" || n == "T" || n == "D" || n == "K" || n == "G") return Kind::stop;
  if (n == "CH" || n == "JH") return Kind::affricate;
  if (n == "M" || n == "N" || n == "NG") return Kind::nasal;
  if (n == "L" || n == "R") return Kind::liquid;
  if (n == "W" || n == "Y" || n == "HH") return Kind::glide;
  return Kind::fricative;  // F V TH DH S Z SH ZH
}

bool voicing_pair(Phone a, Phone b) {
  static const std::array<std::pair<const char*, const char*>, 8> pairs = {
      {{"P", "B"}, {"T", "D"}, {"K", "G"}, {"F", "V"}, {"S", "Z"}, {"SH", "ZH"}, {"CH", "JH"}, {"TH", "DH"}}};
  const std::string x = phone_name(a), y = phone_name(b);
  for (const auto& [p, q] : pairs)
    if ((x == p && y == q) || (x == q && y == p)) return true;
  return false;
}

// Substitution costs, precomputed once. Vowels are what a recognizer
// confuses most (and what accents move), so any vowel for another is cheaper
// than any consonant change; within a class cheaper still.
struct Costs {
  std::array<std::array<float, kPhones>, kPhones> sub{};
  std::array<float, kPhones> indel{};
  Costs() {
    for (int i = 0; i < kPhones; ++i) {
      const Phone a = static_cast<Phone>(i);
      for (int j = 0; j < kPhones; ++j) {
        const Phone b = static_cast<Phone>(j);
        float c;
        if (i == j) c = 0;
        else if (is_vowel(a) && is_vowel(b)) c = kind(a) == kind(b) ? 0.3f : 0.5f;
        else if (is_vowel(a) != is_vowel(b)) c = 1.0f;
        else if (voicing_pair(a, b)) c = 0.35f;
        else if (kind(a) == kind(b)) c = 0.6f;
        else c = 0.9f;
        sub[i][j] = c;
      }
      // A schwa or an "h" comes and goes with how fast one speaks; other
      // phones inserted or dropped cost more, consonants most.
      const std::string n = phone_name(a);
      indel[i] = (n == "AH" || n == "HH") ? 0.4f : is_vowel(a) ? 0.6f : 0.7f;
    }
  }
};
const Costs& costs() {
  static const Costs c;
  return c;
}

// Weighted edit distance that gives up (returns > limit) as soon as every
// cell of a row is above `limit`. Pronunciations are short (the longest in
// the dictionary has 30-odd phones), so the rows live on the stack.
double bounded_distance(const Phone* a, std::size_t n, const Phone* b, std::size_t m, double limit) {
  constexpr std::size_t kMax = 64;
  const auto& k = costs();
  if (m + 1 > kMax) return limit + 1;
  float prev[kMax], cur[kMax];
  prev[0] = 0;
  for (std::size_t j = 1; j <= m; ++j) prev[j] = prev[j - 1] + k.indel[b[j - 1]];
  const float lim = static_cast<float>(limit);
  for (std::size_t i = 1; i <= n; ++i) {
    const Phone ai = a[i - 1];
    const auto& sub = k.sub[ai];
    const float del = k.indel[ai];
    cur[0] = prev[0] + del;
    float row_min = cur[0];
    for (std::size_t j = 1; j <= m; ++j) {
      const float v = std::min(std::min(prev[j - 1] + sub[b[j - 1]], prev[j] + del), cur[j - 1] + k.indel[b[j - 1]]);
      cur[j] = v;
      row_min = std::min(row_min, v);
    }
    if (row_min > lim) return limit + 1;
    std::copy(cur, cur + m + 1, prev);
  }
  return prev[m];
}

}  // namespace

double phone_distance(const std::vector<Phone>& a, const std::vector<Phone>& b) {
  return bounded_distance(a.data(), a.size(), b.data(), b.size(), std::numeric_limits<double>::infinity());
}

double phonetic_distance(std::string_view a, std::string_view b) {
  const Pronunciations* dict = pronunciations();
  if (!dict) return std::numeric_limits<double>::infinity();
  double best = std::numeric_limits<double>::infinity();
  for (const auto* pa : dict->of(a))
    for (const auto* pb : dict->of(b)) {
      const double longer = static_cast<double>(std::max(pa->phones.size(), pb->phones.size()));
      best = std::min(best, phone_distance(pa->phones, pb->phones) / longer);
    }
  return best;
}

std::vector<SoundAlike> sound_alikes(std::string_view word, int max, double max_distance) {
  std::vector<SoundAlike> out;
  const Pronunciations* dict = pronunciations();
  if (!dict || max <= 0) return out;
  std::map<std::string, double> best;  // by word, its least normalised distance
  for (const auto* p : dict->of(word)) {
    const std::size_t n = p->phones.size();
    // A sound-alike is at most a third of the phones longer or shorter (one
    // phone for short words): what a recognizer writes for a word is about as
    // long as the word, and the bound keeps a lookup to a fraction of the
    // dictionary.
    const std::size_t reach = std::max<std::size_t>(1, n / 3);
    const std::size_t lo = n > reach ? n - reach : 1;
    for (std::size_t len = lo; len <= n + reach; ++len) {
      const double longer = static_cast<double>(std::max(n, len));
      const double limit = max_distance * longer;
      const auto& ids = dict->with_length(len);
      const Phone* flat = dict->phones_with_length(len).data();
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const double d = bounded_distance(p->phones.data(), n, flat + k * len, len, limit);
        if (d > limit) continue;
        const auto& other = dict->all()[ids[k]];
        if (other.word == word) continue;
        const double norm = d / longer;
        auto [it, fresh] = best.try_emplace(other.word, norm);
        if (!fresh) it->second = std::min(it->second, norm);
      }
    }
  }
  for (const auto& [w, d] : best) {
    // Identical sounds (homophones: "harbor", "harbour") weigh 1; the bound
    // weighs half.
    out.push_back({w, d, 1.0 - 0.5 * d / max_distance});
  }
  std::sort(out.begin(), out.end(), [](const SoundAlike& a, const SoundAlike& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.word < b.word;
  });
  if (static_cast<int>(out.size()) > max) out.resize(max);
  return out;
}

}  // namespace scribe::lexicon
