#include "tests/compare/png_pixels.h"

#include <cstdlib>
#include <cstring>

#include <zlib.h>

namespace tessel::test {

namespace {
std::uint32_t be32(const std::string& b, std::size_t at) {
    return std::uint32_t(std::uint8_t(b[at])) << 24 | std::uint32_t(std::uint8_t(b[at + 1])) << 16 |
           std::uint32_t(std::uint8_t(b[at + 2])) << 8 | std::uint32_t(std::uint8_t(b[at + 3]));
}

int paeth(int a, int b, int c) {
    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}
}  // namespace

bool decode_png(const std::string& bytes, Image& image, std::string& error) {
    static const char signature[] = "\x89PNG\r\n\x1a\n";
    if (bytes.size() < 8 || bytes.compare(0, 8, signature, 8) != 0) {
        error = "not a PNG";
        return false;
    }
    int depth = 0, color = 0, interlace = 0;
    std::string idat;
    for (std::size_t at = 8; at + 8 <= bytes.size();) {
        const std::uint32_t len = be32(bytes, at);
        const std::string type = bytes.substr(at + 4, 4);
        if (at + 12 + len > bytes.size()) {
            error = "truncated chunk " + type;
            return false;
        }
        if (type == "IHDR") {
            image.width = int(be32(bytes, at + 8));
            image.height = int(be32(bytes, at + 12));
            depth = std::uint8_t(bytes[at + 16]);
            color = std::uint8_t(bytes[at + 17]);
            interlace = std::uint8_t(bytes[at + 20]);
        } else if (type == "IDAT") {
            idat += bytes.substr(at + 8, len);
        } else if (type == "IEND") {
            break;
        }
        at += 12 + len;
    }
    if (depth != 8 || (color != 2 && color != 6) || interlace != 0 || image.width <= 0 || image.height <= 0) {
        error = "unsupported PNG: depth " + std::to_string(depth) + ", colour type " + std::to_string(color);
        return false;
    }
    const int bpp = color == 6 ? 4 : 3;
    const std::size_t stride = std::size_t(image.width) * bpp;
    std::vector<std::uint8_t> raw((stride + 1) * image.height);
    uLongf raw_len = raw.size();
    if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
        raw_len != raw.size()) {
        error = "inflate failed";
        return false;
    }
    std::vector<std::uint8_t> prev(stride, 0), cur(stride);
    image.rgb.resize(std::size_t(image.width) * image.height * 3);
    for (int y = 0; y < image.height; ++y) {
        const std::uint8_t* line = raw.data() + y * (stride + 1);
        const int filter = line[0];
        for (std::size_t x = 0; x < stride; ++x) {
            const int a = x >= std::size_t(bpp) ? cur[x - bpp] : 0, b = prev[x], c = x >= std::size_t(bpp) ? prev[x - bpp] : 0;
            int v = line[1 + x];
            switch (filter) {
                case 0: break;
                case 1: v += a; break;
                case 2: v += b; break;
                case 3: v += (a + b) / 2; break;
                case 4: v += paeth(a, b, c); break;
                default: error = "bad filter " + std::to_string(filter); return false;
            }
            cur[x] = std::uint8_t(v);
        }
        for (int x = 0; x < image.width; ++x)
            std::memcpy(&image.rgb[(std::size_t(y) * image.width + x) * 3], &cur[std::size_t(x) * bpp], 3);
        std::swap(prev, cur);
    }
    return true;
}

}  // namespace tessel::test
