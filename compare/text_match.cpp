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

// How far a denial reaches, in characters: a few words. std::regex recurses per character it
// scans, so the windows stay short whatever the length of a row's clause.
constexpr std::size_t kDenialReach = 160;

bool denied_before(const std::string& t, std::size_t start) {
    std::size_t from = start;
    while (from > 0 && start - from < kDenialReach && !ends_clause(t, from - 1)) --from;
    std::string before = t.substr(from, start - from);
    // "no selective but full", "not selective: full", "not BF16, instead FP8": the turn ends the denial.
    static const std::regex turn(R"(.*(?:\sbut\s|\sinstead\s|:|\s-\s))");
    std::smatch m;
    if (std::regex_search(before, m, turn)) before = before.substr(std::size_t(m.length(0)));
    static const std::regex denial(
        R"((?:^|\s)(?:no|not(?!\s+only)|without|w/o|never|disabled?|nor)(?:\s+\S+){0,2}(?:\s+(?:or|nor|and)(?:\s+\S+)?)*\s*$|(?:^|[\s(])non-\s*$)");
    return std::regex_search(before, denial);
}

bool denied_after(const std::string& t, std::size_t end) {
    std::size_t to = end;
    while (to < t.size() && to - end < kDenialReach && !ends_clause(t, to)) ++to;
    // A value set on the name itself ("cpu_offload=False", "offload: none"), or a denying word after
    // at most two words that are not another setting (a key with ':' or '=', a --flag): in flattened
    // configuration text the next key's value ("activation_cpu_offload: false") is not this one's.
    static const std::regex denial(
        R"(^\S*?\s*[:=]\s*(?:false|0|none|off|disabled)\b|)"
        R"(^\S*(?:\s+[^\s:=-][^\s:=]*){0,2}?\s+(?:(?:is|was|are|were)\s+)?(?:(?:not|(?:is|was|are|were)n't)\s+(?:used|enabled|reported|counted|included|supported)|disabled\b|off\b(?!\s+by\s+default)|false\b|none\b))");
    return std::regex_search(t.substr(end, to - end), denial);
}
}  // namespace

bool affirmed(const std::string& text, const std::string& pattern) {
    // Quotation marks do not break a denial ("without 'FlashAttention'"): read as spaces, but not
    // an apostrophe inside a word ("Megatron's", "isn't").
    std::string t = lowercase(text);
    const auto letter = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
    for (std::size_t i = 0; i < t.size(); ++i) {
        const bool apostrophe = t[i] == '\'' && i > 0 && i + 1 < t.size() && letter(t[i - 1]) && letter(t[i + 1]);
        if (t[i] == '"' || t[i] == '`' || (t[i] == '\'' && !apostrophe)) t[i] = ' ';
    }
    const std::regex re(pattern, std::regex::icase);
    for (std::sregex_iterator it(t.begin(), t.end(), re), end; it != end; ++it) {
        const std::size_t start = std::size_t(it->position(0));
        const std::size_t stop = start + std::size_t(it->length(0));
        if (!denied_before(t, start) && !denied_after(t, stop)) return true;
    }
    return false;
}

bool says_unstated(const std::string& text) {
    // The whole field: "unknown", "N/A.", "not stated (probably ZeRO-1)"; not "Not stated; the config
    // shows --recompute-granularity selective", whose rest still says something.
    static const std::regex unstated(
        R"(^\s*(?:unknown|n/?a|not\s+(?:stated|specified|given|reported|published|disclosed)|unspecified|unstated|undisclosed|unreported|\?+|-+|tbd)\s*\.?\s*(?:\([^)]*\)\s*\.?\s*)?$)",
        std::regex::icase);
    return std::regex_search(text, unstated);
}

}  // namespace tessel
