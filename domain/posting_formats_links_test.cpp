// What the link-free formats remove (holds_link, strip_urls) and how the
// formats report it.
#include <gtest/gtest.h>

#include "domain/posting_formats.h"

namespace scribe::posting {
namespace {

TEST(PostingLinks, EverySchemeWithAnAuthorityIsALink) {
  for (const char* w : {"http://a.b", "HTTPS://A.B/c", "ftp://files.example.net/x", "ssh://host", "sftp://h/p",
                        "chrome-extension://abc", "xhttp://a", "made-up+scheme://x", "(ftp://y.z)", "\"ws://q\""})
    EXPECT_TRUE(holds_link(w)) << w;
}

TEST(PostingLinks, SchemeTokensFollowedBySomethingAreLinks) {
  for (const char* w : {"javascript:alert(1)", "JavaScript:void(0)", "data:text/html;base64,PHNj", "mailto:a@b",
                        "mailto:someone", "tel:+15551234", "sms:5551234", "vbscript:msgbox", "http:evil",
                        "(javascript:x)", "magnet:?xt=urn:btih:abc", "file:/etc/passwd"})
    EXPECT_TRUE(holds_link(w)) << w;
  // Nothing after the colon: a heading word, not a link. Unknown schemes
  // without "//" are ordinary words ("Re:", "Note:x", times).
  for (const char* w : {"JavaScript:", "Data:", "mailto:", "Tel:", "Re:budget", "Note:see", "10:30", "Q3:results"})
    EXPECT_FALSE(holds_link(w)) << w;
}

TEST(PostingLinks, BareDomainsWithAKnownTopLevelDomainAreLinks) {
  for (const char* w : {"evil.com",      "evil.com/path", "EVIL.COM",        "evil.co.uk",   "sub.evil.io",
                        "evil.com.",     "(evil.com)",    "evil.com:8080",   "evil.com?x=1", "evil.com#top",
                        "my-site.xyz/a", "www.example",   "www.example.zzz", "3.com",        "evil.zip",
                        "clip.mov",      "ASP.NET",       "Socket.IO",       "dot.com",      "x/evil.com",
                        "see:evil.com",  "evil.xn--p1ai", "café.de",         "bücher.de/x",  "日本語.jp"})
    EXPECT_TRUE(holds_link(w)) << w;
}

TEST(PostingLinks, EmailAddressesAreLinks) {
  for (const char* w : {"me@evil.co.uk", "First.Last@example.org", "<a+b@mail.example.com>", "x@y.io,"})
    EXPECT_TRUE(holds_link(w)) << w;
  // A handle or a local name is not an address a platform links.
  for (const char* w : {"@handle", "me@home", "name@server.internal"}) EXPECT_FALSE(holds_link(w)) << w;
}

TEST(PostingLinks, FoldedSpellingsAreLinksToo) {
  EXPECT_TRUE(holds_link("\uFF45\uFF56\uFF49\uFF4C\uFF0E\uFF43\uFF4F\uFF4D"));  // fullwidth ｅｖｉｌ．ｃｏｍ
  EXPECT_TRUE(holds_link("evil\u200B.com"));                                    // split by a zero-width space
  EXPECT_TRUE(holds_link("java\u00ADscript:alert(1)"));                         // and by a soft hyphen
  EXPECT_TRUE(holds_link("\U0001D41E\U0001D42F\U0001D422\U0001D425.com"));      // mathematical bold 𝐞𝐯𝐢𝐥
}

TEST(PostingLinks, OrdinaryDottedWordsAreNotLinks) {
  for (const char* w : {"e.g.",
                        "i.e.,",
                        "3.5",
                        "$3.99",
                        "v2.0.1",
                        "1.5x",
                        "Mr.",
                        "Dr.",
                        "U.S.",
                        "Ph.D.",
                        "a.m.",
                        "No.1",
                        "Node.js",
                        "Vue.js",
                        "talk.mp3",
                        "episode.mp4",
                        "four-topics.wav",
                        "notes.txt",
                        "report.pdf",
                        "St.Louis",
                        "end.",
                        "...",
                        "Yahoo!",
                        "C#",
                        "x86.64",
                        "budget",
                        "Café",
                        "日本語",
                        "😀",
                        "—",
                        "",
                        "localhost:8080",
                        "192.168.0.1",
                        "www.",
                        "x.y"})
    EXPECT_FALSE(holds_link(w)) << w;
}

TEST(PostingLinks, StripRemovesWholeWordsAndKeepsTheRest) {
  std::string t = "Read https://a.b/c and www.x.org or (http://y.z) now";
  EXPECT_EQ(strip_urls(t), 3);
  EXPECT_EQ(t, "Read and or now");
  t = "Visit evil.com/path, ftp://x.y javascript:alert(1) or mail me@evil.co.uk e.g. Node.js 3.5 Mr. Smith";
  EXPECT_EQ(strip_urls(t), 4);
  EXPECT_EQ(t, "Visit or mail e.g. Node.js 3.5 Mr. Smith");
  // A no-break or zero-width space separates words: it does not take the
  // word before the link with it. The spaces kept stay as they were.
  t = "Talk\u00A0evil.com\u00A0today and\u200Bwww.x.org";
  EXPECT_EQ(strip_urls(t), 2);
  EXPECT_EQ(t, "Talk\u00A0today and");
  // Nothing to remove: the text is untouched, odd spaces and all.
  t = "plain\u00A0text, e.g. caf\u00E0 3.5";
  EXPECT_EQ(strip_urls(t), 0);
  EXPECT_EQ(t, "plain\u00A0text, e.g. caf\u00E0 3.5");
  t = "evil.com";
  EXPECT_EQ(strip_urls(t), 1);
  EXPECT_EQ(t, "");
}

RenderRequest linky(std::string format) {
  RenderRequest r;
  r.format = std::move(format);
  r.variant = "quoted_sections";
  r.duration_seconds = 1000;
  r.title = "Interview evil.com/path";
  r.cta = true;
  r.cta_text = "Write to hello@scribe.example.org";
  r.items = {{0, "Intro ftp://files.example.net/a", "see javascript:alert(1) e.g. now", std::nullopt, "https://x.y"},
             {60, "Budget 3.5 evil.co.uk", "mail me@evil.co.uk, Mr. Smith", std::nullopt, ""},
             {120, "evil.zip", std::nullopt, std::nullopt, ""}};
  return r;
}

TEST(PostingLinks, LinkFreeFormatsRemoveEveryKindAndSaySo) {
  for (const char* format : {"photo_caption", "professional_post"}) {
    const Rendered out = render(linky(format));
    for (const char* gone : {"evil", "ftp", "javascript", "@", "hello", "://"})
      EXPECT_EQ(out.text.find(gone), std::string::npos) << format << ": " << gone << " in " << out.text;
    for (const char* kept : {"Interview", "Intro", "e.g. now", "Budget 3.5", "Mr. Smith", "Write to"})
      EXPECT_NE(out.text.find(kept), std::string::npos) << format << ": " << kept << " missing from " << out.text;
    const auto said = [&](std::string_view part) {
      for (const auto& w : out.warnings)
        if (w.find(part) != std::string::npos) return true;
      return false;
    };
    EXPECT_TRUE(said("removed a link from the heading")) << format;
    EXPECT_TRUE(said("removed a link from the title at 00:00")) << format;
    EXPECT_TRUE(said("removed a link from the quote at 00:00")) << format;
    EXPECT_TRUE(said("removed a link from the title at 01:00")) << format;
    EXPECT_TRUE(said("removed a link from the quote at 01:00")) << format;
    EXPECT_TRUE(said("removed a link from the call-to-action footer")) << format;
    EXPECT_TRUE(said("dropped the item at 02:00: nothing is left of it without links")) << format;
    EXPECT_EQ(out.items_used, 2) << format;
  }
  // The formats that allow links keep them all.
  const Rendered plain = render(linky("plain"));
  EXPECT_NE(plain.text.find("evil.co.uk"), std::string::npos);
  EXPECT_NE(plain.text.find("javascript:alert(1)"), std::string::npos);
  EXPECT_TRUE(plain.warnings.empty());
}

}  // namespace
}  // namespace scribe::posting
