// Just enough PNG decoding to look at a screenshot: 8-bit RGB or RGBA, not interlaced (what
// Chromium writes), inflated with zlib and unfiltered.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::test {

struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgb;  // width * height * 3
};

// False with `error` set for anything else.
bool decode_png(const std::string& bytes, Image& image, std::string& error);

}  // namespace tessel::test
