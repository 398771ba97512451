// Drawing helpers for the HTML report: text escaping, compact numbers, axis ticks, and an SVG
// canvas that appends elements as text. Every string that reaches the page goes through
// escape_xml here, so no caller can forget it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// &, <, >, " and ' as entities: safe in element text and in double-quoted attributes.
std::string escape_xml(std::string_view text);

// A coordinate or length with at most two decimals and no trailing zeros ("12.5", "3", "0.07").
std::string svg_number(double x);

// About `target` round tick values (1, 2 or 5 times a power of ten) covering [0, max], or
// [lo, hi]: from the round value at or below the start through the first at or above the end.
std::vector<double> nice_ticks(double max, int target = 6);
std::vector<double> nice_ticks(double lo, double hi, int target);

struct Svg {
    double width = 0, height = 0;
    std::string body;
    int rects = 0;  // how many <rect> elements body holds (the timeline caps them)
};

// cls is a CSS class (styles live in the page's <style>); title, when not empty, becomes a
// hover tooltip. All text is escaped.
void svg_rect(Svg& s, double x, double y, double w, double h, std::string_view cls, std::string_view title = "");
void svg_line(Svg& s, double x1, double y1, double x2, double y2, std::string_view cls);
// anchor: start | middle | end
void svg_text(Svg& s, double x, double y, std::string_view text, std::string_view cls = "",
              std::string_view anchor = "start");
void svg_circle(Svg& s, double cx, double cy, double r, std::string_view cls, std::string_view title = "");
// The finished element; aria_label describes the picture for screen readers.
std::string svg_element(const Svg& s, std::string_view aria_label);

}  // namespace tessel
