#pragma once
#include <vector>

#include "domain/enrichment_artifact.h"
#include "enrichment/corpus.h"
#include "enrichment/keyphrase.h"
#include "enrichment/structure.h"

// The posting-chapters cache: the four variants of the one style, built from
// labelled sections and chapters. A refine prompt's steering has already
// raised the weight of its terms in every span, so it also decides which
// spans count as salient here and which sentences are quoted.
namespace scribe::enrichment {

// standard: every chapter (start, title).
// highlights: the 5 most salient chapters (or sections, when there are
//   fewer than 5 chapters but more sections), in time order.
// clips: 3 moments of 15-60 s within one section each, the ones whose
//   sentences are most central to their section, in time order, titled by
//   their own keyphrases. A recording shorter than 15 s gives one clip of
//   all of it; one without speech none.
// quoted_sections: 8-12 quotes, each one whole sentence of one segment
//   (verbatim), from the most salient sections (one each when there are 8
//   or more sections, several each otherwise), headlined by the keyphrases
//   of the quote's segment and section; fewer when the transcript has fewer
//   sentences.
PostingChapters build_posting(const Corpus& corpus, const std::vector<LabeledSpan>& sections,
                              const std::vector<LabeledSpan>& chapters, const Steering& steering);

}  // namespace scribe::enrichment
