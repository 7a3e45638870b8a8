#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/text.h"
#include "domain/transcript_artifact.h"
#include "enrichment/text.h"

// Transcripts made up for the enrichment tests: sentences of known topics
// timed as speech (0.4 s a word, short pauses), so that every test knows where
// the topics change. Header-only and used by tests only; nothing here is
// compiled into the service.
namespace scribe::enrichment::testing {

struct TopicWords {
  std::string name;
  std::vector<std::string> nouns;  // singular, lower-case
  std::vector<std::string> verbs;  // third person singular ("simmers")
  std::vector<std::string> adjectives;
};

inline const std::vector<TopicWords>& topic_vocabularies() {
  static const std::vector<TopicWords> topics = {
      {"cooking",
       {"pasta", "sauce", "garlic", "onion", "oven", "recipe", "butter", "flour", "kitchen", "pan", "tomato", "basil"},
       {"simmers", "bakes", "melts", "chops", "stirs", "roasts", "seasons", "boils"},
       {"fresh", "crispy", "golden", "spicy", "creamy", "savory"}},
      {"astronomy",
       {"telescope", "galaxy", "planet", "star", "orbit", "nebula", "comet", "astronomer", "moon", "asteroid",
        "spectrum", "universe"},
       {"orbits", "shines", "rotates", "collapses", "expands", "glows", "drifts", "eclipses"},
       {"distant", "bright", "cosmic", "faint", "massive", "infrared"}},
      {"football",
       {"striker", "goalkeeper", "referee", "stadium", "penalty", "match", "coach", "defender", "midfielder", "goal",
        "league", "tackle"},
       {"scores", "passes", "defends", "shoots", "tackles", "saves", "dribbles", "heads"},
       {"offside", "brilliant", "muddy", "crowded", "late", "decisive"}},
      {"banking",
       {"mortgage", "loan", "interest", "deposit", "account", "inflation", "lender", "savings", "budget", "credit",
        "bond", "dividend"},
       {"lends", "borrows", "invests", "charges", "saves", "repays", "deposits", "compounds"},
       {"fixed", "variable", "monthly", "annual", "risky", "secure"}},
      {"gardening",
       {"seedling", "compost", "soil", "greenhouse", "shovel", "weed", "tulip", "hedge", "fertilizer", "mulch",
        "orchard", "sprout"},
       {"blooms", "sprouts", "wilts", "grows", "prunes", "waters", "digs", "ripens"},
       {"leafy", "organic", "damp", "sunny", "perennial", "shady"}},
      {"sailing",
       {"sailboat", "harbor", "anchor", "mast", "rudder", "captain", "tide", "keel", "sailor", "compass", "voyage",
        "lighthouse"},
       {"sails", "drifts", "steers", "anchors", "capsizes", "navigates", "docks", "tacks"},
       {"windy", "salty", "calm", "stormy", "coastal", "nautical"}},
      {"music",
       {"guitar", "violin", "melody", "drummer", "orchestra", "chord", "rhythm", "piano", "concert", "singer", "album",
        "trumpet"},
       {"plays", "sings", "strums", "tunes", "records", "composes", "performs", "rehearses"},
       {"acoustic", "melodic", "loud", "classical", "jazzy", "harmonic"}},
      {"medicine",
       {"patient", "doctor", "vaccine", "symptom", "hospital", "nurse", "surgery", "diagnosis", "antibiotic", "clinic",
        "fever", "therapy"},
       {"treats", "heals", "prescribes", "diagnoses", "recovers", "examines", "injects", "monitors"},
       {"chronic", "acute", "clinical", "medical", "painful", "sterile"}},
  };
  return topics;
}

// A small deterministic generator (the tests must not depend on std's
// distributions, which differ between standard libraries).
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  std::uint32_t next() {
    state_ = state_ * 1664525u + 1013904223u;
    return state_ >> 8;
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }

 private:
  std::uint32_t state_;
};

// One spoken-style sentence about `topic`: topic words in a frame of common
// words and fillers, as people talk.
inline std::string topic_sentence(const TopicWords& topic, Lcg& rng) {
  const std::string& n1 = rng.pick(topic.nouns);
  const std::string& n2 = rng.pick(topic.nouns);
  const std::string& n3 = rng.pick(topic.nouns);
  const std::string& v = rng.pick(topic.verbs);
  const std::string& a = rng.pick(topic.adjectives);
  std::string s;
  switch (rng.next() % 6) {
    case 0:
      s = "So the " + a + " " + n1 + " " + v + " the " + n2 + " near the " + n3 + ".";
      break;
    case 1:
      s = "I think the " + n1 + " really " + v + " when the " + n2 + " is " + a + ".";
      break;
    case 2:
      s = "Yeah, every " + n1 + " " + v + " a " + a + " " + n2 + " and we love it.";
      break;
    case 3:
      s = "What happens when the " + n1 + " " + v + " without a " + n2 + "?";
      break;
    case 4:
      s = "You know, the " + n1 + " and the " + n2 + " are both " + a + " today.";
      break;
    default:
      s = "Our " + n1 + " " + v + " the " + a + " " + n2 + " before the " + n3 + " does.";
      break;
  }
  s[0] = static_cast<char>(s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0]);
  return s;
}

// Segments timed as speech at 0.4 s a word with 0.3 s pauses.
inline transcript::TranscriptArtifact transcript_of(const std::vector<std::string>& sentences) {
  transcript::TranscriptArtifact t;
  t.language = "en";
  t.engine = "test";
  double time = 0.5;
  for (const std::string& text : sentences) {
    int words = 1;
    for (char c : text) words += c == ' ';
    transcript::ArtifactSegment s;
    s.id = 1000 + static_cast<std::int64_t>(t.segments.size());
    s.start = time;
    s.end = time + 0.4 * words;
    s.speaker = "SPEAKER_00";
    s.text = text;
    t.segments.push_back(std::move(s));
    time = t.segments.back().end + 0.3;
  }
  t.duration_seconds = time + 1.0;
  t.speakers = 1;
  return t;
}

// `per_topic` generated sentences for each of the first `topics` topics
// (cycling through the vocabularies), and the true boundaries: the index of
// the first segment of every topic after the first.
inline transcript::TranscriptArtifact generated_transcript(int topics, int per_topic, std::vector<int>* boundaries,
                                                           std::uint32_t seed = 7) {
  Lcg rng(seed);
  std::vector<std::string> sentences;
  const auto& vocab = topic_vocabularies();
  for (int k = 0; k < topics; ++k) {
    if (k > 0 && boundaries) boundaries->push_back(static_cast<int>(sentences.size()));
    for (int i = 0; i < per_topic; ++i) sentences.push_back(topic_sentence(vocab[k % vocab.size()], rng));
  }
  return transcript_of(sentences);
}

// A hand-written episode of six topics (pasta, a space telescope, a football
// final, interest rates, growing tomatoes, sleep), a paragraph each, one
// sentence a segment: what a talk show transcript reads like.
inline std::vector<std::vector<std::string>> episode_paragraphs() {
  return {
      {"Welcome back to the show everyone, today we have a packed episode about cooking, space, sports and money.",
       "Let's start in the kitchen because I finally learned how to make fresh pasta at home.",
       "You only need flour, eggs and a pinch of salt to make the dough.",
       "The trick is to knead the dough for about ten minutes until it feels smooth and elastic.",
       "Then you let the dough rest under a towel for half an hour so the gluten relaxes.",
       "I roll the pasta sheets very thin with a rolling pin, almost thin enough to read a newspaper through them.",
       "Fresh pasta cooks much faster than dried pasta, usually in two or three minutes of boiling water.",
       "Salt the water generously, it should taste like the sea.",
       "For the sauce I like a simple tomato sauce with garlic, olive oil and fresh basil.",
       "Save a cup of the pasta water because the starch helps the sauce cling to the noodles.",
       "Honestly once you make fresh pasta at home it is hard to go back to the boxed kind."},
      {"Now let's switch gears and talk about astronomy, because there was a big discovery this week.",
       "Astronomers used the new space telescope to photograph a galaxy that formed very early in the universe.",
       "The light from that galaxy traveled for more than thirteen billion years before it reached the telescope.",
       "The telescope sees in infrared light, which lets it look through clouds of cosmic dust.",
       "Because the universe is expanding, the light from distant galaxies is stretched toward the red end of the "
       "spectrum.",
       "Scientists call that stretching redshift, and it tells them how far away the galaxy is.",
       "The mirror of the telescope is made of gold plated beryllium segments that unfolded in space.",
       "It orbits the sun about a million miles from earth, far away from the heat of our planet.",
       "Some astronomers think these early galaxies grew faster than our models of the universe predicted.",
       "So the telescope might force cosmologists to rethink how the first stars and galaxies formed."},
      {"Okay, sports time, and the football season ended with a dramatic final last weekend.",
       "The home team scored the winning goal in the ninetieth minute after a long corner kick.",
       "Their goalkeeper made three incredible saves in the second half to keep the match level.",
       "The coach changed the formation at halftime and moved the striker closer to the penalty box.",
       "Fans in the stadium were singing for the whole match, even when the team was losing.",
       "The referee gave two yellow cards to the defenders for late tackles in the first half.",
       "That striker finished the season as the top scorer in the league with twenty eight goals.",
       "Next season the club wants to sign a new midfielder and strengthen the defense.",
       "The final was probably the best football match I have watched in years."},
      {"Let's talk about money, specifically saving and interest rates.",
       "The central bank raised interest rates again this month to fight inflation.",
       "Higher interest rates mean your savings account finally pays something, but mortgages get more expensive.",
       "If you have a variable rate mortgage, your monthly payment probably went up this year.",
       "A good rule is to keep an emergency fund of three to six months of expenses in a savings account.",
       "Credit card debt usually has the highest interest rate, so pay that off before you invest.",
       "Index funds are a cheap way to invest in the stock market for the long term.",
       "The fees on an index fund are often ten times lower than on an actively managed fund.",
       "Compound interest is the reason starting to save early matters so much for retirement.",
       "Even small monthly contributions to a retirement account add up over thirty years."},
      {"Our next topic is gardening, since spring has arrived and my tomatoes are already planted.",
       "Tomato plants need at least six hours of direct sunlight every day to produce fruit.",
       "I start the seeds indoors in small pots about eight weeks before the last frost.",
       "When the seedlings are strong, I move them outside to the garden bed and water them deeply.",
       "Mulch around the plants keeps the soil moist and stops weeds from growing.",
       "Compost from kitchen scraps is the best fertilizer for a vegetable garden.",
       "Watch out for aphids on the leaves, a spray of soapy water usually gets rid of them.",
       "By the end of summer a single tomato plant can give you dozens of ripe tomatoes."},
      {"Finally, a few words about sleep, because most of us do not get enough of it.",
       "Adults need between seven and nine hours of sleep every night to stay healthy.",
       "The blue light from phone screens can delay the release of melatonin, the hormone that makes you sleepy.",
       "Keeping a regular bedtime, even on weekends, trains your body clock.",
       "Caffeine stays in your body for hours, so a coffee in the afternoon can ruin your sleep.",
       "A cool, dark and quiet bedroom helps you fall asleep faster.",
       "Chronic lack of sleep is linked to weight gain, poor memory and a weaker immune system.",
       "If you cannot sleep after twenty minutes, get up and read a book until you feel tired.",
       "That's all for today, thanks for listening and see you next week."},
  };
}

// The episode as a transcript, and where its topics start.
inline transcript::TranscriptArtifact episode_transcript(std::vector<int>* boundaries = nullptr) {
  std::vector<std::string> sentences;
  for (const auto& paragraph : episode_paragraphs()) {
    if (!sentences.empty() && boundaries) boundaries->push_back(static_cast<int>(sentences.size()));
    sentences.insert(sentences.end(), paragraph.begin(), paragraph.end());
  }
  return transcript_of(sentences);
}

// What is wrong with `title` as a title, or "" when nothing is: 2-6 words,
// at most 80 bytes, Title Case (small words lower-case inside), no stop word
// or filler at either end, at least half of its words not stop words.
inline std::string title_problem(const std::string& title) {
  if (title.size() > 80) return "longer than 80 bytes";
  std::vector<std::string> w;
  for (std::size_t i = 0; i <= title.size();) {
    const std::size_t sp = std::min(title.find(' ', i), title.size());
    if (sp == i) return "empty word";
    w.push_back(title.substr(i, sp - i));
    i = sp + 1;
  }
  if (w.size() < 2 || w.size() > 6) return "not 2-6 words";
  int stops = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string lower = to_lower(w[i]);
    const bool edge = i == 0 || i + 1 == w.size();
    if (edge && (is_stop_word(lower) || is_filler_word(lower))) return "stop word or filler at an edge: " + w[i];
    stops += is_stop_word(lower);
    const char c = w[i][0];
    const bool upper = (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!upper && (edge || !is_title_small_word(lower))) return "not Title Case: " + w[i];
  }
  if (stops * 2 > static_cast<int>(w.size())) return "mostly stop words";
  return "";
}

}  // namespace scribe::enrichment::testing
