#include "compare/svg.h"

#include <cmath>

#include <fmt/format.h>

namespace tessel {

std::string escape_xml(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::string svg_number(double x) {
    if (!std::isfinite(x)) return "0";
    std::string s = fmt::format("{:.2f}", x);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s;
}

std::vector<double> nice_ticks(double max, int target) { return nice_ticks(0.0, max, target); }

std::vector<double> nice_ticks(double lo, double hi, int target) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return {std::isfinite(lo) ? lo : 0.0};
    const double raw = (hi - lo) / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * mag;
    for (double f : {1.0, 2.0, 5.0})
        if (f * mag >= raw) {
            step = f * mag;
            break;
        }
    std::vector<double> ticks;
    const double first = std::floor(lo / step + 1e-9) * step;
    // Through the first tick at or above hi, so an axis ends on a labelled value.
    for (int i = 0;; ++i) {
        ticks.push_back(first + i * step);
        if (ticks.back() >= hi * (1 - 1e-9)) break;
    }
    return ticks;
}

namespace {
// Ends an element opened without its '>': self-closing, or holding a <title> (the tooltip).
// Built by appends: GCC 12 reads `"literal" + std::string` as an overlapping memcpy (-Wrestrict).
void close_element(Svg& s, std::string_view tag, std::string_view title) {
    if (title.empty()) {
        s.body += "/>";
        return;
    }
    s.body += "><title>";
    s.body += escape_xml(title);
    s.body += "</title></";
    s.body += tag;
    s.body += '>';
}
}  // namespace

void svg_rect(Svg& s, double x, double y, double w, double h, std::string_view cls, std::string_view title) {
    s.body += fmt::format(R"(<rect class="{}" x="{}" y="{}" width="{}" height="{}")", escape_xml(cls), svg_number(x),
                          svg_number(y), svg_number(std::max(w, 0.0)), svg_number(std::max(h, 0.0)));
    close_element(s, "rect", title);
    s.body += '\n';
    ++s.rects;
}

void svg_line(Svg& s, double x1, double y1, double x2, double y2, std::string_view cls) {
    s.body += fmt::format(R"(<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}"/>)", escape_xml(cls), svg_number(x1),
                          svg_number(y1), svg_number(x2), svg_number(y2));
    s.body += '\n';
}

void svg_text(Svg& s, double x, double y, std::string_view text, std::string_view cls, std::string_view anchor) {
    s.body += fmt::format(R"(<text x="{}" y="{}" text-anchor="{}")", svg_number(x), svg_number(y), escape_xml(anchor));
    if (!cls.empty()) s.body += fmt::format(R"( class="{}")", escape_xml(cls));
    s.body += '>';
    s.body += escape_xml(text);
    s.body += "</text>\n";
}

void svg_circle(Svg& s, double cx, double cy, double r, std::string_view cls, std::string_view title) {
    s.body += fmt::format(R"(<circle class="{}" cx="{}" cy="{}" r="{}")", escape_xml(cls), svg_number(cx),
                          svg_number(cy), svg_number(r));
    close_element(s, "circle", title);
    s.body += '\n';
}

std::string svg_element(const Svg& s, std::string_view aria_label) {
    return fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                       R"(role="img" aria-label="{2}">)"
                       "\n{3}</svg>\n",
                       svg_number(s.width), svg_number(s.height), escape_xml(aria_label), s.body);
}

}  // namespace tessel
