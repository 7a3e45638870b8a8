#pragma once
#include <pqxx/pqxx>

namespace scribe::eventstore {

// Applies the numbered files of migrations/ (compiled into the binary) that the
// database has not seen yet, each in its own transaction, under an advisory
// lock so that two processes starting together do not race. A migration that
// landed is never edited: a changed checksum is refused. Returns how many ran.
int migrate(pqxx::connection& conn);

}  // namespace scribe::eventstore
