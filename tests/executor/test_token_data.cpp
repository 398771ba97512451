// Token data: the synthetic stream is deterministic, in range and learnable; token files are read
// in both .bin conventions and bad ones are rejected with the file and the problem named.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "core/errors.h"
#include "executor/token_data.h"

namespace tessel {

namespace {
std::string write_file(const std::string& name, const std::vector<std::int32_t>& header,
                       const std::vector<std::uint16_t>& tokens, bool odd_byte = false) {
    // Named by process as well: ctest runs tests (and the sanitized build) as separate processes.
    const std::string path =
        (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
    std::ofstream out(path, std::ios::binary);
    if (!header.empty()) {
        std::vector<std::int32_t> h(256, 0);
        std::copy(header.begin(), header.end(), h.begin());
        out.write(reinterpret_cast<const char*>(h.data()), 1024);
    }
    out.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size() * 2));
    if (odd_byte) out.put('x');
    return path;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(TokenData, SyntheticIsDeterministicInRangeAndShifted) {
    TokenSource a = TokenSource::synthetic(1024, 5), b = TokenSource::synthetic(1024, 5);
    std::vector<int> x1(64), y1(64), x2(64), y2(64);
    for (int i : {0, 1, 17, 100000}) {
        a.sample(i, 64, x1.data(), y1.data());
        b.sample(i, 64, x2.data(), y2.data());
        EXPECT_EQ(x1, x2);
        EXPECT_EQ(y1, y2);
        for (int t = 0; t < 64; ++t) {
            EXPECT_GE(x1[t], 0);
            EXPECT_LT(x1[t], 1024);
            if (t + 1 < 64) {
                EXPECT_EQ(y1[t], x1[t + 1]);
            }
        }
    }
    a.sample(1, 64, x2.data(), y2.data());
    a.sample(2, 64, x1.data(), y1.data());
    EXPECT_NE(x1, x2);  // samples differ
}

TEST(TokenData, SyntheticFollowsOneSuccessorThreeTimesInFour) {
    // The learnable structure: each token's most frequent successor takes ~3/4 of its transitions.
    TokenSource s = TokenSource::synthetic(50, 3);
    std::map<int, std::map<int, int>> next;
    std::vector<int> x(256), y(256);
    for (int i = 0; i < 400; ++i) {
        s.sample(i, 256, x.data(), y.data());
        for (int t = 0; t < 256; ++t) next[x[t]][y[t]]++;
    }
    long top = 0, all = 0;
    for (auto& [tok, succ] : next) {
        int best = 0;
        for (auto& [n, c] : succ) {
            best = std::max(best, c);
            all += c;
        }
        top += best;
    }
    EXPECT_NEAR(double(top) / all, 0.75 + 0.25 / 50, 0.02);
}

TEST(TokenData, ReadsRawAndLlmcFiles) {
    std::vector<std::uint16_t> tokens;
    for (int i = 0; i < 100; ++i) tokens.push_back(std::uint16_t(i % 37));
    for (bool llmc : {false, true}) {
        const std::string path = write_file(llmc ? "tessel_llmc.bin" : "tessel_raw.bin",
                                            llmc ? std::vector<std::int32_t>{20240520, 1, 100} : std::vector<std::int32_t>{},
                                            tokens);
        TokenSource s = TokenSource::from_file(path, 37, 16);
        EXPECT_EQ(s.size(), 100u);
        std::vector<int> x(16), y(16);
        s.sample(2, 16, x.data(), y.data());  // starts at 2·16 = 32
        for (int t = 0; t < 16; ++t) {
            EXPECT_EQ(x[t], (32 + t) % 37);
            EXPECT_EQ(y[t], (33 + t) % 37);
        }
        std::remove(path.c_str());
    }
}

TEST(TokenData, RejectsBadFiles) {
    EXPECT_NE(error_of([] { TokenSource::from_file("/no/such/tokens.bin", 10, 4); }).find("cannot open"),
              std::string::npos);
    const std::string big = write_file("tessel_big.bin", {}, {1, 2, 3, 70, 4, 5, 6, 7});
    const std::string msg = error_of([&] { TokenSource::from_file(big, 64, 4); });
    EXPECT_NE(msg.find("token 70 at position 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find(big), std::string::npos) << msg;
    const std::string odd = write_file("tessel_odd.bin", {}, {1, 2, 3}, true);
    EXPECT_NE(error_of([&] { TokenSource::from_file(odd, 64, 1); }).find("whole number"), std::string::npos);
    const std::string short_file = write_file("tessel_short.bin", {}, {1, 2, 3});
    EXPECT_NE(error_of([&] { TokenSource::from_file(short_file, 64, 8); }).find("fewer than one sequence"),
              std::string::npos);
    std::vector<std::uint16_t> some(10, 1);
    const std::string lying = write_file("tessel_lying.bin", {20240520, 1, 500}, some);
    EXPECT_NE(error_of([&] { TokenSource::from_file(lying, 64, 4); }).find("header says 500"), std::string::npos);
    const std::string version = write_file("tessel_v2.bin", {20240520, 2, 10}, some);
    EXPECT_NE(error_of([&] { TokenSource::from_file(version, 64, 4); }).find("version 2"), std::string::npos);
    for (const auto& p : {big, odd, short_file, lying, version}) std::remove(p.c_str());
}

}  // namespace tessel
