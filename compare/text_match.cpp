#include "compare/text_match.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace tessel {

std::string lowercase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

bool contains_ignoring_case(const std::string& text, const std::string& word) {
    return lowercase(text).find(lowercase(word)) != std::string::npos;
}

namespace {
bool ends_clause(const std::string& t, std::size_t i) {
    const char ch = t[i];
    if (ch == ',' || ch == ';' || ch == '(' || ch == ')' || ch == '[' || ch == ']') return true;
    if (ch != '.' || (i + 1 < t.size() && t[i + 1] != ' ')) return false;  // "1.5", "e.g"
    // A full stop before a space ends a sentence, unless it ends an abbreviation ("incl.", "e.g.").
    std::size_t w = i;
    while (w > 0 && t[w - 1] != ' ' && t[w - 1] != '(') --w;
    static const char* kAbbreviations[] = {"incl", "e.g", "i.e", "etc", "vs", "approx", "ca", "al", "eq", "fig", "sel", "cf", "resp", "no"};
    const std::string word = t.substr(w, i - w);
    return std::none_of(std::begin(kAbbreviations), std::end(kAbbreviations), [&](const char* a) { return word == a; });
}

bool denied_before(const std::string& t, std::size_t start) {
    std::size_t from = start;
    while (from > 0 && !ends_clause(t, from - 1)) --from;
    static const std::regex denial(R"((?:^|\s)(?:no|not|without|w/o|non|never|disabled?|nor)(?:\s+\S+){0,2}(?:\s+(?:or|nor|and)(?:\s+\S+)?)*\s*$)");
    return std::regex_search(t.substr(from, start - from), denial);
}

bool denied_after(const std::string& t, std::size_t end) {
    std::size_t to = end;
    while (to < t.size() && !ends_clause(t, to)) ++to;
    static const std::regex denial(
        R"(^\S*(?:\s+\S+){0,2}?\s*(?:(?:is|was|are|were)\s+)?(?:not\s+used|not\s+enabled|disabled\b|off\b|false\b|=\s*false\b|:\s*false\b|=\s*0\b|:\s*0\b|none\b))");
    return std::regex_search(t.substr(end, to - end), denial);
}
}  // namespace

bool affirmed(const std::string& text, const std::string& pattern) {
    const std::string t = lowercase(text);
    const std::regex re(pattern, std::regex::icase);
    for (std::sregex_iterator it(t.begin(), t.end(), re), end; it != end; ++it) {
        const std::size_t start = std::size_t(it->position(0));
        const std::size_t stop = start + std::size_t(it->length(0));
        if (!denied_before(t, start) && !denied_after(t, stop)) return true;
    }
    return false;
}

bool says_unstated(const std::string& text) {
    static const std::regex unstated(
        R"(^\s*(?:unknown|n/?a|not\s+(?:stated|specified|given|reported|published|disclosed)|unspecified|unstated|undisclosed|unreported|\?+|-+|tbd)\s*(?:$|[(.,;:]))",
        std::regex::icase);
    return std::regex_search(text, unstated);
}

}  // namespace tessel
