#include "lexicon/wordnet.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "common/log.h"

namespace scribe::lexicon {
namespace {

constexpr std::array<const char*, 4> kSuffix = {"noun", "verb", "adj", "adv"};

// How many of a word's senses (most frequent first) lend it synonyms: the
// rarer senses of a word are rarely what a question means by it.
constexpr int kSynonymSenses = 2;
// Weights: a synonym of the first sense, of the second, a derived form.
constexpr double kFirstSenseSynonym = 0.8;
constexpr double kLaterSenseSynonym = 0.6;
constexpr double kDerived = 0.7;

struct IndexEntry {
  int tagged_senses = 0;
  std::vector<long> offsets;  // synsets, most frequent sense first
};

struct Database {
  std::array<std::unordered_map<std::string, IndexEntry>, 4> index;
  std::array<std::unordered_map<std::string, std::vector<std::string>>, 4> exceptions;
  std::array<std::string, 4> data;  // the data files whole, read by offset
};

std::mutex g_mu;
std::string g_dir = "/usr/share/wordnet";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const Database* database() {
  static const Database* db = []() -> const Database* {
    std::string dir;
    {
      std::lock_guard lock(g_mu);
      dir = g_dir;
    }
    try {
      auto* d = new Database;
      for (int p = 0; p < 4; ++p) {
        std::istringstream index(read_file(dir + "/index." + kSuffix[p]));
        std::string line;
        while (std::getline(index, line)) {
          if (line.empty() || line[0] == ' ') continue;  // the licence
          std::istringstream f(line);
          std::string lemma, pos;
          int synsets = 0, pointers = 0;
          f >> lemma >> pos >> synsets >> pointers;
          std::string skip;
          for (int i = 0; i < pointers; ++i) f >> skip;
          int senses = 0;
          IndexEntry e;
          f >> senses >> e.tagged_senses;
          long offset = 0;
          while (f >> offset) e.offsets.push_back(offset);
          d->index[p].emplace(std::move(lemma), std::move(e));
        }
        std::istringstream exc(read_file(dir + "/" + kSuffix[p] + ".exc"));
        while (std::getline(exc, line)) {
          std::istringstream f(line);
          std::string form, base;
          f >> form;
          while (f >> base) d->exceptions[p][form].push_back(base);
        }
        d->data[p] = read_file(dir + "/data." + kSuffix[p]);
      }
      return d;
    } catch (const std::exception& e) {
      log::warn("meaning-alike matching is off: WordNet could not be read", {{"dir", dir}, {"error", e.what()}});
      return nullptr;
    }
  }();
  return db;
}

std::string lower(std::string_view w) {
  std::string out(w);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// WordNet writes multiword lemmas with underscores and adjectives with a
// syntactic marker ("galore(ip)").
std::string display(std::string lemma) {
  if (auto paren = lemma.find('('); paren != std::string::npos) lemma.erase(paren);
  std::replace(lemma.begin(), lemma.end(), '_', ' ');
  return lower(lemma);
}

struct Synset {
  std::vector<std::string> words;
  struct Pointer {
    std::string symbol;
    long offset;
    int pos;
    int source;  // word number in this synset (1-based), 0 = the whole synset
    int target;
  };
  std::vector<Pointer> pointers;
};

int pos_index(char letter) {
  switch (letter) {
    case 'n':
      return 0;
    case 'v':
      return 1;
    case 'a':
    case 's':
      return 2;
    case 'r':
      return 3;
  }
  return -1;
}

Synset read_synset(const Database& db, int pos, long offset) {
  Synset s;
  const std::string& data = db.data[pos];
  if (offset < 0 || static_cast<std::size_t>(offset) >= data.size()) return s;
  const std::size_t end = data.find('\n', offset);
  std::istringstream f(data.substr(offset, end == std::string::npos ? std::string::npos : end - offset));
  std::string off, lexfile, type, count_hex;
  f >> off >> lexfile >> type >> count_hex;
  const int words = std::stoi(count_hex, nullptr, 16);
  for (int i = 0; i < words; ++i) {
    std::string w, lex_id;
    f >> w >> lex_id;
    s.words.push_back(display(w));
  }
  int pointers = 0;
  f >> pointers;
  for (int i = 0; i < pointers; ++i) {
    std::string symbol, target_pos, st;
    long target = 0;
    f >> symbol >> target >> target_pos >> st;
    const int p = pos_index(target_pos.empty() ? '?' : target_pos[0]);
    if (p < 0 || st.size() != 4) continue;
    s.pointers.push_back(
        {symbol, target, p, std::stoi(st.substr(0, 2), nullptr, 16), std::stoi(st.substr(2, 2), nullptr, 16)});
  }
  return s;
}

// Morphy's detachment rules per part of speech: suffix -> replacement.
const std::array<std::vector<std::pair<std::string, std::string>>, 4>& rules() {
  static const std::array<std::vector<std::pair<std::string, std::string>>, 4> r = {{
      {{"s", ""},
       {"ses", "s"},
       {"xes", "x"},
       {"zes", "z"},
       {"ches", "ch"},
       {"shes", "sh"},
       {"men", "man"},
       {"ies", "y"}},
      {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
      {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
      {},
  }};
  return r;
}

}  // namespace

void configure_wordnet(std::string dir) {
  std::lock_guard lock(g_mu);
  g_dir = std::move(dir);
}

bool wordnet_available() { return database() != nullptr; }

std::vector<std::string> base_forms(std::string_view word_in, Pos pos) {
  std::vector<std::string> out;
  const Database* db = database();
  if (!db) return out;
  const int p = static_cast<int>(pos);
  const std::string word = lower(word_in);
  auto add = [&](const std::string& w) {
    if (db->index[p].count(w) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  };
  add(word);
  if (auto it = db->exceptions[p].find(word); it != db->exceptions[p].end())
    for (const auto& b : it->second) add(b);
  for (const auto& [suffix, replacement] : rules()[p])
    if (word.size() > suffix.size() && word.compare(word.size() - suffix.size(), suffix.size(), suffix) == 0)
      add(word.substr(0, word.size() - suffix.size()) + replacement);
  return out;
}

std::vector<MeaningAlike> meaning_alikes(std::string_view word_in, int max) {
  std::vector<MeaningAlike> out;
  const Database* db = database();
  if (!db || max <= 0) return out;
  const std::string word = lower(word_in);
  std::map<std::string, MeaningAlike> best;
  std::vector<std::string> own;  // the word and its base forms: never offered
  auto offer = [&](const std::string& w, double weight, const char* relation) {
    if (w.empty() || std::find(own.begin(), own.end(), w) != own.end()) return;
    auto [it, fresh] = best.try_emplace(w, MeaningAlike{w, weight, relation});
    if (!fresh && weight > it->second.weight) it->second = MeaningAlike{w, weight, relation};
  };
  std::vector<std::pair<int, std::string>> lemmas;
  for (int p = 0; p < 4; ++p)
    for (const auto& b : base_forms(word, static_cast<Pos>(p))) {
      lemmas.push_back({p, b});
      if (std::find(own.begin(), own.end(), b) == own.end()) own.push_back(b);
    }
  for (const auto& [p, lemma] : lemmas) {
    const auto& entry = db->index[p].at(lemma);
    const std::string shown = display(lemma);
    for (std::size_t sense = 0; sense < entry.offsets.size(); ++sense) {
      const Synset s = read_synset(*db, p, entry.offsets[sense]);
      int self = 0;  // this lemma's word number in the synset
      for (std::size_t i = 0; i < s.words.size(); ++i)
        if (s.words[i] == shown) self = static_cast<int>(i) + 1;
      if (static_cast<int>(sense) < kSynonymSenses)
        for (const auto& w : s.words) offer(w, sense == 0 ? kFirstSenseSynonym : kLaterSenseSynonym, "synonym");
      // Derived forms of this very lemma, from any of its senses.
      for (const auto& ptr : s.pointers) {
        if (ptr.symbol != "+" || (ptr.source != 0 && ptr.source != self)) continue;
        const Synset t = read_synset(*db, ptr.pos, ptr.offset);
        if (ptr.target >= 1 && ptr.target <= static_cast<int>(t.words.size()))
          offer(t.words[ptr.target - 1], kDerived, "derived");
      }
    }
  }
  for (auto& [_, m] : best) out.push_back(std::move(m));
  std::sort(out.begin(), out.end(), [](const MeaningAlike& a, const MeaningAlike& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.word < b.word;
  });
  if (static_cast<int>(out.size()) > max) out.resize(max);
  return out;
}

std::array<double, 4> pos_shares(std::string_view word) {
  std::array<double, 4> score{};
  const Database* db = database();
  if (!db) return score;
  // A sense counts 1, a sense seen tagged in the Semantic Concordance 3
  // more: how WordNet orders senses by use, without the counts file.
  double total = 0;
  for (int p = 0; p < 4; ++p)
    for (const auto& b : base_forms(word, static_cast<Pos>(p))) {
      const auto& e = db->index[p].at(b);
      score[p] = std::max(score[p], static_cast<double>(e.offsets.size()) + 3.0 * e.tagged_senses);
    }
  for (double s : score) total += s;
  if (total > 0)
    for (double& s : score) s /= total;
  return score;
}

double pos_share(std::string_view word, Pos pos) { return pos_shares(word)[static_cast<int>(pos)]; }

bool is_noun(std::string_view word) { return !base_forms(word, Pos::noun).empty(); }

}  // namespace scribe::lexicon
