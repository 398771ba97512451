// Case-insensitive matching of the free text in published-run rows (sources, notes, hardware).
#pragma once
#include <string>

namespace tessel {

std::string lowercase(std::string s);
// Whether `word` occurs in `text`, ignoring ASCII case.
bool contains_ignoring_case(const std::string& text, const std::string& word);

}  // namespace tessel
