#include "speech/ngram_lm.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace scribe::speech {
namespace {

constexpr int kIdBits = 21;
constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

}  // namespace

NgramLm::NgramLm(int order) : order_(order), grams_(size_t(std::max(order, 1))) {
  if (order < 1 || order > kMaxOrder) throw std::runtime_error("n-gram order must be 1 to 3");
}

uint32_t NgramLm::intern(const std::string& word) {
  if (auto it = ids_.find(word); it != ids_.end()) return it->second;
  if (words_.size() > kIdMask) throw std::runtime_error("n-gram vocabulary too large");
  ids_.emplace(word, uint32_t(words_.size()));
  words_.push_back(word);
  return uint32_t(words_.size() - 1);
}

int64_t NgramLm::find(const std::string& word) const {
  auto it = ids_.find(word);
  return it == ids_.end() ? -1 : int64_t(it->second);
}

uint64_t NgramLm::pack(const uint32_t* ids, int n) {
  uint64_t key = 0;
  for (int i = 0; i < n; ++i) key = (key << kIdBits) | ids[i];
  return key;
}

std::vector<uint32_t> NgramLm::unpack(uint64_t key, int n) {
  std::vector<uint32_t> ids(static_cast<size_t>(n));
  for (int i = n - 1; i >= 0; --i, key >>= kIdBits) ids[size_t(i)] = uint32_t(key & kIdMask);
  return ids;
}

void NgramLm::set(const std::vector<uint32_t>& ids, NgramScore score) {
  const int n = int(ids.size());
  if (n < 1 || n > order_) throw std::runtime_error("n-gram longer than the model's order");
  grams_[size_t(n - 1)][pack(ids.data(), n)] = score;
}

const NgramScore* NgramLm::get(const uint32_t* ids, int n) const {
  if (n < 1 || n > order_) return nullptr;
  const auto& m = grams_[size_t(n - 1)];
  auto it = m.find(pack(ids, n));
  return it == m.end() ? nullptr : &it->second;
}

double NgramLm::log10_prob(const uint32_t* history, int n_history, uint32_t w) const {
  n_history = std::min(n_history, order_ - 1);
  uint32_t buf[kMaxOrder];
  double backoff = 0;
  // Try the longest history first; each miss adds that history's back-off
  // weight and drops its oldest word.
  for (int k = n_history; k >= 0; --k) {
    std::copy(history + (n_history - k), history + n_history, buf);
    buf[k] = w;
    if (const NgramScore* s = get(buf, k + 1)) return backoff + s->prob;
    if (k > 0)
      if (const NgramScore* h = get(buf, k)) backoff += h->backoff;
  }
  return kNegInf;
}

NgramLm read_arpa(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::vector<size_t> counts;
  while (std::getline(in, line) && line != "\\data\\") {
  }
  while (std::getline(in, line)) {
    if (line.rfind("ngram ", 0) != 0) break;
    const auto eq = line.find('=');
    if (eq == std::string::npos) throw std::runtime_error(path + ": bad count line");
    counts.push_back(std::stoul(line.substr(eq + 1)));
  }
  if (counts.empty() || counts.size() > size_t(NgramLm::kMaxOrder))
    throw std::runtime_error(path + ": no \\data\\ section, or order above 3");
  NgramLm lm(int(counts.size()));
  int n = 0;
  std::vector<uint32_t> ids;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '\\') {
      if (line == "\\end\\") break;
      n = std::atoi(line.c_str() + 1);
      if (n < 1 || n > lm.order()) throw std::runtime_error(path + ": bad section " + line);
      continue;
    }
    std::istringstream fields(line);
    NgramScore score;
    if (!(fields >> score.prob)) throw std::runtime_error(path + ": bad line: " + line);
    ids.clear();
    std::string w;
    for (int i = 0; i < n && fields >> w; ++i) {
      // Every word must be one of the 1-grams, as ARPA readers (sphinxbase's
      // among them) require.
      if (n > 1 && lm.find(w) < 0) throw std::runtime_error(path + ": '" + w + "' is not among the 1-grams");
      ids.push_back(lm.intern(w));
    }
    if (int(ids.size()) != n) throw std::runtime_error(path + ": short line: " + line);
    if (!(fields >> score.backoff)) score.backoff = 0;
    lm.set(ids, score);
  }
  for (int k = 1; k <= lm.order(); ++k)
    if (lm.count(k) != counts[size_t(k - 1)])
      throw std::runtime_error(path + ": " + std::to_string(k) + "-gram count disagrees with its header");
  return lm;
}

void write_arpa(const NgramLm& lm, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "\\data\\\n";
  for (int n = 1; n <= lm.order(); ++n) out << "ngram " << n << "=" << lm.count(n) << "\n";
  char num[32];
  for (int n = 1; n <= lm.order(); ++n) {
    out << "\n\\" << n << "-grams:\n";
    // Sorted, so that the same models always give the same file.
    std::vector<std::pair<uint64_t, NgramScore>> rows(lm.grams(n).begin(), lm.grams(n).end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, score] : rows) {
      std::snprintf(num, sizeof num, "%.6f", double(score.prob));
      out << num;
      for (uint32_t id : NgramLm::unpack(key, n)) out << '\t' << lm.word(id);
      if (n < lm.order()) {
        std::snprintf(num, sizeof num, "%.6f", double(score.backoff));
        out << '\t' << num;
      }
      out << '\n';
    }
  }
  out << "\n\\end\\\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace scribe::speech
