#include "domain/posting_formats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/text.h"

namespace scribe::posting {
namespace {

// Far beyond the 12-hour platform maximum; keeps the conversion to int defined.
constexpr double kMaxSeconds = 1e7;

// Whole seconds, rounded down: a chapter mark must not point after the moment
// it names begins. Negative and NaN count as 0.
int whole_seconds(double s) {
  if (!(s > 0)) return 0;
  return static_cast<int>(std::floor(std::min(s, kMaxSeconds)));
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// Parentheses and spaces would end a Markdown link target early.
std::string markdown_link_target(std::string_view url) {
  std::string out;
  for (const char c : url) {
    if (c == ' ') out += "%20";
    else if (c == '(') out += "%28";
    else if (c == ')') out += "%29";
    else out.push_back(c);
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// One item on its way through the rules.
struct Entry {
  int seconds = 0;
  std::string title;
  std::optional<std::string> quote;  // quoted_sections only
  std::string url;
};

// A piece of a post: the heading, one item, or the footer, with what separates
// it from the piece before it in the same post.
struct Unit {
  std::string text;
  std::string_view sep;
};

// One rendering of a chapter variant under a platform's rules: the steps in
// the order they apply, each recording its warnings in out_.
class Renderer {
 public:
  Renderer(const RenderRequest& r, const Platform& p)
      : r_(r), p_(p), quoted_(r.variant == "quoted_sections"), limit_(p.max_chars > 0 ? p.max_chars : 0) {}

  Rendered run() {
    out_.items_total = static_cast<int>(r_.items.size());
    out_.constraints = constraints_json(p_);
    std::vector<Entry> entries = prepare();
    apply_content_rules(entries);
    cap_titles(entries);
    first_at_zero(entries);
    space_out(entries);
    cap_chapters(entries);
    if (p_.layout == Layout::kPosts) lay_out_posts(entries);
    else lay_out_text(entries);
    out_.char_count = static_cast<int>(utf8_length(out_.text));
    if (out_.items_used == 0) {
      out_.ok_to_paste = false;
    } else if (out_.items_used < p_.min_chapters) {
      out_.ok_to_paste = false;
      warn("only " + plural(static_cast<std::size_t>(out_.items_used), "chapter", "chapters") + ": " +
           std::string(p_.format) + " needs at least " + std::to_string(p_.min_chapters) + " (not ok to paste)");
    }
    return std::move(out_);
  }

 private:
  std::string ts(int seconds) const { return format_timestamp(seconds, p_.timestamps); }
  std::size_t weight(std::string_view s) const { return weighted_length(s, p_.weights); }
  void warn(std::string line) { out_.warnings.push_back(std::move(line)); }
  std::string fmt() const { return std::string(p_.format); }

  // Sorted, with whitespace tidied, without items that have nothing to show
  // or that start after the recording ends.
  std::vector<Entry> prepare() {
    std::vector<Entry> entries;
    for (const Item& item : r_.items) {
      Entry e{whole_seconds(item.start_seconds), collapse_whitespace(item.title), std::nullopt, item.url};
      if (quoted_ && item.quote) {
        std::string q = collapse_whitespace(*item.quote);
        if (!q.empty()) e.quote = std::move(q);
      }
      entries.push_back(std::move(e));
    }
    const auto by_time = [](const Entry& a, const Entry& b) { return a.seconds < b.seconds; };
    if (!std::is_sorted(entries.begin(), entries.end(), by_time)) {
      std::stable_sort(entries.begin(), entries.end(), by_time);
      warn("put the items in time order");
    }
    std::vector<Entry> kept;
    for (Entry& e : entries) {
      if (e.title.empty() && !e.quote) {
        warn("dropped the item at " + ts(e.seconds) + ": it has no title");
      } else if (r_.duration_seconds > 0 && e.seconds >= r_.duration_seconds) {
        warn("dropped the item at " + ts(e.seconds) + ": it starts after the end of the recording (" +
             ts(whole_seconds(r_.duration_seconds)) + ")");
      } else {
        kept.push_back(std::move(e));
      }
    }
    return kept;
  }

  // Links and hashtags the platform does not allow, removed from one text.
  void clean(std::string& text, const std::string& where) {
    if (!p_.allows_urls && strip_urls(text) > 0)
      warn("removed a link from " + where + ": " + fmt() + " allows no URLs");
    if (!p_.allows_hashtags && strip_hashtags(text) > 0)
      warn("removed the # of hashtags in " + where + ": " + fmt() + " allows no hashtags");
  }

  void apply_content_rules(std::vector<Entry>& entries) {
    if (p_.allows_urls && p_.allows_hashtags) return;
    std::size_t links_left_out = 0;
    for (Entry& e : entries) {
      clean(e.title, "the title at " + ts(e.seconds));
      if (e.quote) clean(*e.quote, "the quote at " + ts(e.seconds));
      if (e.quote && e.quote->empty()) e.quote.reset();
      if (!p_.allows_urls && !e.url.empty()) ++links_left_out;
    }
    // Said once: this is the format's nature, not something wrong with an item.
    if (links_left_out > 0)
      warn("left out " + plural(links_left_out, "item link", "item links") + ": " + fmt() + " allows no URLs");
    std::erase_if(entries, [&](const Entry& e) {
      if (!e.title.empty() || e.quote) return false;
      warn("dropped the item at " + ts(e.seconds) + ": nothing is left of it without links");
      return true;
    });
  }

  void cap_titles(std::vector<Entry>& entries) {
    if (p_.title_cap <= 0) return;
    const auto cap = static_cast<std::size_t>(p_.title_cap);
    for (Entry& e : entries) {
      if (utf8_length(e.title) <= cap) continue;
      // A title that is one long word stays whole: cutting it would cut a
      // word, and the cap is a readability limit, not the platform's.
      if (auto shorter = shorten_at_word(e.title, cap)) {
        e.title = std::move(*shorter);
        warn("shortened the title at " + ts(e.seconds) + " at a word boundary to " + std::to_string(cap) +
             " characters");
      } else {
        warn("left the title at " + ts(e.seconds) + " longer than " + std::to_string(cap) +
             " characters: it has no word boundary to shorten at");
      }
    }
  }

  void first_at_zero(std::vector<Entry>& entries) {
    if (!p_.first_must_be_zero || entries.empty() || entries.front().seconds == 0) return;
    warn("moved the first chapter from " + ts(entries.front().seconds) + " to " + ts(0) + ": " + fmt() +
         " requires the first chapter at " + ts(0));
    entries.front().seconds = 0;
  }

  // Items closer than the minimum spacing are merged into the one before
  // (which keeps its title), and a last chapter shorter than the spacing
  // into its predecessor.
  void space_out(std::vector<Entry>& entries) {
    const int gap = p_.min_spacing_seconds;
    if (gap <= 0) return;
    std::vector<Entry> kept;
    for (Entry& e : entries) {
      if (!kept.empty() && e.seconds - kept.back().seconds < gap) {
        warn("merged the chapter at " + ts(e.seconds) + " into the one at " + ts(kept.back().seconds) + ": " + fmt() +
             " needs chapters at least " + std::to_string(gap) + " s apart");
        continue;
      }
      kept.push_back(std::move(e));
    }
    if (kept.size() > 1 && r_.duration_seconds > 0 && r_.duration_seconds - kept.back().seconds < gap) {
      warn("merged the chapter at " + ts(kept.back().seconds) + " into the one before: it starts less than " +
           std::to_string(gap) + " s before the end of the recording");
      kept.pop_back();
    }
    entries = std::move(kept);
  }

  void cap_chapters(std::vector<Entry>& entries) {
    const auto cap = static_cast<std::size_t>(std::max(p_.max_chapters, 0));
    if (cap == 0 || entries.size() <= cap) return;
    warn("dropped " + plural(entries.size() - cap, "item", "items") + " from " + ts(entries[cap].seconds) +
         " on: " + fmt() + " allows at most " + std::to_string(cap) + " chapters");
    entries.resize(cap);
    out_.truncated = true;
  }

  std::string body(const Entry& e) const {
    if (!e.quote) return e.title;
    return (e.title.empty() ? "" : e.title + " \u2014 ") + "\"" + *e.quote + "\"";
  }

  std::string line(const Entry& e) const {
    switch (p_.layout) {
      case Layout::kMarkdownLinks:
        return "- " + (e.url.empty() ? ts(e.seconds) : "[" + ts(e.seconds) + "](" + markdown_link_target(e.url) + ")") +
               " " + body(e);
      case Layout::kPosts:
        return ts(e.seconds) + " " + body(e) + (e.url.empty() ? "" : " " + e.url);
      case Layout::kParagraphs:
        return (e.title.empty() ? "" : e.title + " ") + "(" + ts(e.seconds) + ")" +
               (e.quote ? ": \"" + *e.quote + "\"" : "");
      case Layout::kChapterLines:
      case Layout::kCaption:
      case Layout::kPlainLines:
        break;
    }
    return ts(e.seconds) + " " + body(e);
  }

  // What a line weighs without one of its parts. A part is weighed alone as
  // it is in the line (it is set off by spaces or quote marks), so this is
  // exact; the guard only keeps a surprise from wrapping around.
  static std::size_t without(std::size_t whole, std::size_t part) { return whole > part ? whole - part : 0; }

  // Shortens the item's quote, else drops it, then shortens its title, all at
  // word boundaries, until its line weighs at most `limit`. False when even
  // that does not fit (the caller drops the item).
  bool fit(Entry& e, std::size_t limit, const std::string& room, std::vector<std::string>& notes) const {
    if (weight(line(e)) <= limit) return true;
    const std::string at = ts(e.seconds);
    if (e.quote) {
      const std::size_t rest = without(weight(line(e)), weight(*e.quote));
      auto shorter = rest < limit ? shorten_at_word(*e.quote, limit - rest, p_.weights) : std::nullopt;
      if (shorter) {
        e.quote = std::move(*shorter);
        notes.push_back("shortened the quote at " + at + " at a word boundary to fit " + room);
        return weight(line(e)) <= limit;
      }
      e.quote.reset();
      notes.push_back("left out the quote at " + at + ": it does not fit " + room);
      if (e.title.empty()) return false;
      if (weight(line(e)) <= limit) return true;
    }
    if (e.title.empty()) return false;
    const std::size_t rest = without(weight(line(e)), weight(e.title));
    auto shorter = rest < limit ? shorten_at_word(e.title, limit - rest, p_.weights) : std::nullopt;
    if (!shorter) return false;
    e.title = std::move(*shorter);
    notes.push_back("shortened the title at " + at + " at a word boundary to fit " + room);
    return weight(line(e)) <= limit;
  }

  // The heading or the footer, cleaned and shortened to `limit` (SIZE_MAX:
  // none); empty when it cannot be shortened that far.
  std::string extra(std::string_view raw, const std::string& what, std::size_t limit) {
    std::string text = collapse_whitespace(raw);
    if (text.empty()) return text;
    clean(text, "the " + what);
    if (text.empty() || weight(text) <= limit) return text;
    if (auto shorter = shorten_at_word(text, limit, p_.weights)) {
      warn("shortened the " + what + " at a word boundary to " + std::to_string(limit) + " characters");
      return *shorter;
    }
    warn("left out the " + what + ": it does not fit " + std::to_string(limit) + " characters");
    return "";
  }

  std::string heading_text(std::size_t limit) {
    if (p_.layout != Layout::kCaption && p_.layout != Layout::kParagraphs && p_.layout != Layout::kPosts) return "";
    return extra(r_.title, "heading", limit);
  }

  std::string footer_text(std::size_t limit) {
    if (!quoted_ || !r_.cta) return "";
    const std::string_view cta = trim(r_.cta_text).empty() ? kDefaultCta : std::string_view(r_.cta_text);
    return extra(cta, "call-to-action footer", limit);
  }

  void dropped_for_budget(const std::vector<Entry>& entries, std::size_t from, const std::string& why) {
    if (from >= entries.size()) return;
    warn("dropped " + plural(entries.size() - from, "item", "items") + " from " + ts(entries[from].seconds) + " on " +
         why);
    out_.truncated = true;
  }

  // Heading, item lines and footer as one text within max_chars; the items
  // that do not fit are dropped from the end, so a chapter list stays a
  // contiguous run from its start.
  void lay_out_text(std::vector<Entry>& entries) {
    const std::string_view sep = p_.layout == Layout::kParagraphs ? "\n\n" : "\n";
    // Heading and footer may take at most a quarter of the budget each, so
    // items always have half of it.
    const std::size_t extra_limit = limit_ > 0 ? limit_ / 4 : std::numeric_limits<std::size_t>::max();
    const std::string heading = heading_text(extra_limit);
    const std::string footer = footer_text(extra_limit);
    const std::size_t overhead =
        (heading.empty() ? 0 : weight(heading) + 2) + (footer.empty() ? 0 : weight(footer) + 2);
    const std::size_t room = limit_ > 0 ? limit_ - overhead : std::numeric_limits<std::size_t>::max();
    const std::string room_name = "the " + std::to_string(limit_) + "-character budget";
    std::vector<std::string> lines;
    std::size_t used = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      Entry& e = entries[i];
      const std::size_t join_cost = lines.empty() ? 0 : weight(sep);
      const std::size_t left = room - used >= join_cost ? room - used - join_cost : 0;
      std::size_t w = weight(line(e));
      if (limit_ > 0 && w > room) {
        // Only an item longer than the whole budget is shortened, and only
        // when it will be used: to what is left.
        std::vector<std::string> notes;
        if (!fit(e, left, room_name, notes)) {
          if (lines.empty()) {
            warn("dropped the item at " + ts(e.seconds) + ": it does not fit " + room_name);
            continue;
          }
          dropped_for_budget(entries, i, "to stay within " + room_name);
          break;
        }
        for (std::string& note : notes) warn(std::move(note));
        w = weight(line(e));
      }
      if (limit_ > 0 && w > left) {
        dropped_for_budget(entries, i, "to stay within " + room_name);
        break;
      }
      used += join_cost + w;
      lines.push_back(line(e));
    }
    out_.items_used = static_cast<int>(lines.size());
    if (lines.empty()) return;
    out_.text = (heading.empty() ? "" : heading + "\n\n") + join(lines, sep) + (footer.empty() ? "" : "\n\n" + footer);
    out_.ok_to_paste = limit_ == 0 || weight(out_.text) <= limit_;
  }

  static std::string numbering(std::size_t k, std::size_t n) { return std::to_string(k) + "/" + std::to_string(n); }

  // Greedy packing: each post takes as many whole units as fit `limit`
  // together with `reserve` (room for the numbering line).
  std::vector<std::string> pack(const std::vector<Unit>& units, std::size_t reserve) const {
    std::vector<std::string> posts;
    std::string cur;
    std::size_t cur_weight = 0;
    for (const Unit& u : units) {
      const std::size_t w = weight(u.text);
      if (!cur.empty() && cur_weight + weight(u.sep) + w + reserve <= limit_) {
        cur += u.sep;
        cur += u.text;
        cur_weight += weight(u.sep) + w;
        continue;
      }
      if (!cur.empty()) posts.push_back(std::move(cur));
      cur = u.text;
      cur_weight = w;
    }
    if (!cur.empty()) posts.push_back(std::move(cur));
    return posts;
  }

  // Packs, then repacks with room for "k/N" until N keeps its digit count.
  std::vector<std::string> thread_of(const std::vector<Unit>& units) const {
    std::vector<std::string> posts = pack(units, 0);
    if (posts.size() <= 1) return posts;
    for (std::size_t n = posts.size();;) {
      posts = pack(units, weight(numbering(n, n) + "\n"));
      if (std::to_string(posts.size()).size() <= std::to_string(n).size()) break;
      n = posts.size();
    }
    for (std::size_t k = 0; k < posts.size(); ++k) posts[k] = numbering(k + 1, posts.size()) + "\n" + posts[k];
    return posts;
  }

  void lay_out_posts(std::vector<Entry>& entries) {
    const std::size_t max_posts = static_cast<std::size_t>(p_.max_posts > 0 ? p_.max_posts : 99);
    const std::size_t reserve = weight(numbering(max_posts, max_posts) + "\n");
    // Every unit fits a post with the widest numbering, so packing never
    // has to cut one.
    const std::size_t unit_limit = limit_ > reserve ? limit_ - reserve : 0;
    const std::string room_name = "a " + std::to_string(limit_) + "-character post";
    const std::string heading = heading_text(unit_limit);
    const std::string footer = footer_text(unit_limit);
    // Each item fitted to one post up front; what that changed is reported
    // only for the items the thread then uses.
    std::vector<std::optional<std::string>> lines;
    std::vector<std::vector<std::string>> notes(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
      Entry& e = entries[i];
      if (fit(e, unit_limit, room_name, notes[i])) {
        lines.push_back(line(e));
      } else {
        lines.push_back(std::nullopt);
        notes[i].push_back("dropped the item at " + ts(e.seconds) + ": it does not fit " + room_name);
      }
    }
    const auto units_of = [&](std::size_t items) {
      std::vector<Unit> units;
      if (!heading.empty()) units.push_back({heading, ""});
      for (std::size_t i = 0; i < items; ++i) {
        // A blank line between the heading and the first item, as in the other layouts.
        if (lines[i]) units.push_back({*lines[i], units.size() == 1 && !heading.empty() ? "\n\n" : "\n"});
      }
      if (!footer.empty()) units.push_back({footer, "\n\n"});
      return units;
    };
    // The most items whose thread stays within max_posts (the post count
    // grows with the items, so a binary search finds it).
    std::size_t lo = 0;
    std::size_t hi = entries.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi + 1) / 2;
      if (thread_of(units_of(mid)).size() <= max_posts) lo = mid;
      else hi = mid - 1;
    }
    for (std::size_t i = 0; i < lo; ++i)
      for (std::string& note : notes[i]) warn(std::move(note));
    dropped_for_budget(entries, lo, "to stay within " + std::to_string(max_posts) + " posts");
    out_.items_used = static_cast<int>(std::count_if(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(lo),
                                                     [](const auto& l) { return l.has_value(); }));
    std::vector<std::string> posts = out_.items_used == 0 ? std::vector<std::string>{} : thread_of(units_of(lo));
    out_.ok_to_paste =
        std::all_of(posts.begin(), posts.end(), [&](const std::string& s) { return weight(s) <= limit_; });
    out_.text = join(posts, "\n\n");
    out_.thread = std::move(posts);
  }

  const RenderRequest& r_;
  const Platform& p_;
  const bool quoted_;
  const std::size_t limit_;
  Rendered out_;
};

// Per-chapter Markdown: "## 12:34 Title" and the summary as a paragraph,
// under the transcription title. Every format gets the same.
Rendered render_show_notes(const RenderRequest& r) {
  Rendered out;
  std::vector<std::string> blocks;
  const std::string title = collapse_whitespace(r.title);
  if (!title.empty()) blocks.push_back("# " + title);
  for (const Item& item : r.items) {
    const std::string chapter = collapse_whitespace(item.title);
    std::string block = "## " + format_timestamp(whole_seconds(item.start_seconds), TimestampStyle::kTwoDigitMinutes) +
                        (chapter.empty() ? "" : " " + chapter);
    const std::string summary = item.summary ? collapse_whitespace(*item.summary) : "";
    if (!summary.empty()) block += "\n\n" + summary;
    blocks.push_back(std::move(block));
  }
  out.items_total = out.items_used = static_cast<int>(r.items.size());
  out.text = r.items.empty() ? "" : join(blocks, "\n\n");
  out.char_count = static_cast<int>(utf8_length(out.text));
  out.ok_to_paste = !r.items.empty();
  return out;
}

// The raw section list as "mm:ss title" lines, untouched but for whitespace.
Rendered render_original(const RenderRequest& r) {
  Rendered out;
  std::vector<std::string> lines;
  for (const Item& item : r.items) {
    const std::string title = collapse_whitespace(item.title);
    lines.push_back(format_timestamp(whole_seconds(item.start_seconds), TimestampStyle::kTwoDigitMinutes) +
                    (title.empty() ? "" : " " + title));
  }
  out.items_total = out.items_used = static_cast<int>(r.items.size());
  out.text = join(lines, "\n");
  out.char_count = static_cast<int>(utf8_length(out.text));
  out.ok_to_paste = !r.items.empty();
  return out;
}

}  // namespace

Rendered render_with(const RenderRequest& r, const Platform& p) {
  if (r.variant == "show_notes") return render_show_notes(r);
  if (r.variant == "original") return render_original(r);
  if (!is_variant(r.variant)) throw std::invalid_argument("unknown posting variant: " + r.variant);
  return Renderer(r, p).run();
}

Rendered render(const RenderRequest& r) {
  if (r.variant == "show_notes") return render_show_notes(r);
  if (r.variant == "original") return render_original(r);
  const Platform* p = find_platform(r.format);
  if (p == nullptr) throw std::invalid_argument("unknown posting format: " + r.format);
  return render_with(r, *p);
}

}  // namespace scribe::posting
