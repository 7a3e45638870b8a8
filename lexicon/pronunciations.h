#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The pronunciations the recognizer itself uses: PocketSphinx's CMU
// dictionary (Debian's pocketsphinx-en-us, `cmudict-en-us.dict`: a word and
// its ARPAbet phones a line, variants as `word(2)`). Loaded once, on first
// use, and shared by the process; read-only after that, so any thread may
// look up.
namespace scribe::lexicon {

// ARPAbet phones as small numbers (stress marks dropped); kPhones of them.
using Phone = std::uint8_t;
inline constexpr int kPhones = 39;
const char* phone_name(Phone p);
std::optional<Phone> phone_of(std::string_view arpabet);  // "AO", "ao1" -> AO; nullopt if none
bool is_vowel(Phone p);

struct Pronunciation {
  std::string word;  // lower case, letters and apostrophes
  std::vector<Phone> phones;
};

class Pronunciations {
 public:
  // Reads a dictionary file; throws std::runtime_error when it cannot.
  static Pronunciations load(const std::string& path);
  // Every pronunciation of `word` (lower case); empty when unknown.
  std::vector<const Pronunciation*> of(std::string_view word) const;
  const std::vector<Pronunciation>& all() const { return entries_; }
  // The pronunciations with `n` phones: indexes into all(), and their phones
  // back to back (n per pronunciation, in the same order), so that a scan
  // of them reads memory in order.
  const std::vector<std::uint32_t>& with_length(std::size_t n) const;
  const std::vector<Phone>& phones_with_length(std::size_t n) const;

 private:
  std::vector<Pronunciation> entries_;  // in file order
  std::vector<std::uint32_t> by_word_;  // indexes sorted by word
  std::vector<std::vector<std::uint32_t>> by_length_;
  std::vector<std::vector<Phone>> phones_by_length_;
};

// Where the process's dictionary is (app/settings.cpp sets it from
// SCRIBE_POCKETSPHINX_MODEL_DIR before serving); the default is Debian's.
void configure_pronunciations(std::string dict_path);
// The process's dictionary, loaded on first use; nullptr (logged once) when
// the file cannot be read, and lookups then find nothing.
const Pronunciations* pronunciations();

}  // namespace scribe::lexicon
