#include "compare/text_match.h"

#include <algorithm>
#include <cctype>

namespace tessel {

std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool contains_ignoring_case(const std::string& text, const std::string& word) {
    return lowercase(text).find(lowercase(word)) != std::string::npos;
}

}  // namespace tessel
