// Case-insensitive matching of the free text in published-run rows (sources, notes, hardware).
#pragma once
#include <string>

namespace tessel {

std::string lowercase(std::string s);
// Whether `word` occurs in `text`, ignoring ASCII case.
bool contains_ignoring_case(const std::string& text, const std::string& word);

// Whether `pattern` (an ECMAScript regular expression, matched ignoring case) occurs in `text`
// somewhere its clause does not deny it. Rows write what a run did not use beside what it did
// ("ZeRO-3 (no CPU offload)", "BF16 (FP8 not used)", "w/o activation recomputation", "cpu_offload=False",
// "do not use --overlap-param-gather or --tp-comm-overlap", "non-MoE"), so a name alone is no statement.
// Denied: "no", "not" (not "not only"), "without", "w/o", "never", "nor" or "disable(d)" at most two
// words before the match (or before a list joined by "or"/"and" that ends at it), "non-" right before
// it, or "not used", "disabled", "off" (not "off by default"), "false", "0" or "none" within the two
// words after it that are not another setting (a key: value, a --flag). Each within the match's
// clause (up to a comma, semicolon, bracket or full stop), and a turn ("but", "instead", a colon)
// ends a denial before it: "not selective but full" affirms "full".
bool affirmed(const std::string& text, const std::string& pattern);

// Whether a field's whole text says the value is not known ("unknown", "N/A", "not stated", "?"),
// which a row means as null.
bool says_unstated(const std::string& text);

}  // namespace tessel
