// JSON reading: every bad input is an InputError naming the file and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/errors.h"
#include "core/json_io.h"
#include "tests/input_error_message.h"

using namespace tessel;

namespace {
using tessel::test::message_of;
}  // namespace

TEST(JsonIo, MalformedTextNamesOriginAndPosition) {
    auto m = message_of([] { parse_json_text("{\"a\": 1,", "cfg.json"); });
    EXPECT_NE(m.find("cfg.json"), std::string::npos) << m;
    EXPECT_NE(m.find("malformed JSON"), std::string::npos) << m;
}

TEST(JsonIo, EmptyAndDeepInputsAreRejected) {
    EXPECT_NE(message_of([] { parse_json_text("  \n", "e.json"); }).find("empty"), std::string::npos);
    std::string deep(100000, '[');
    EXPECT_NE(message_of([&] { parse_json_text(deep, "d.json"); }).find("nested deeper"), std::string::npos);
}

TEST(JsonIo, NanAndOverflowAreRejected) {
    EXPECT_THROW(parse_json_text("{\"a\": NaN}", "n.json"), InputError);
    EXPECT_THROW(parse_json_text("{\"a\": 1e999}", "o.json"), InputError);
}

TEST(JsonIo, MissingFileIsInputError) {
    auto m = message_of([] { read_json_file("no/such/file.json"); });
    EXPECT_NE(m.find("no/such/file.json"), std::string::npos) << m;
}

TEST(JsonIo, ReaderChecksTypesAndRanges) {
    json j = json::parse(R"({"n": -3, "s": 5, "f": 2.5, "big": 1e30})");
    ObjectReader r(j, "x.json");
    auto m = message_of([&] { r.integer("n"); });
    EXPECT_NE(m.find("x.json: key 'n': expected an integer >= 1, got number -3"), std::string::npos) << m;
    EXPECT_NE(message_of([&] { r.string("s"); }).find("key 's': expected a string"), std::string::npos);
    EXPECT_NE(message_of([&] { r.integer("f"); }).find("key 'f'"), std::string::npos);
    EXPECT_NE(message_of([&] { r.integer("big"); }).find("key 'big'"), std::string::npos);
    EXPECT_NE(message_of([&] { r.integer("missing"); }).find("missing"), std::string::npos);
}

TEST(JsonIo, UnknownKeysWarnWithSuggestion) {
    std::vector<std::string> warnings;
    set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    json j = json::parse(R"({"hidden_size": 4, "num_layer": 2})");
    ObjectReader r(j, "m.json");
    r.integer("hidden_size");
    r.integer("num_layers", 1);
    r.finish();
    set_warning_sink([](const std::string&) {});
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("did you mean 'num_layers'"), std::string::npos) << warnings[0];
}

TEST(JsonIo, AtomicWriteLeavesNoTemporaryAndRejectsMissingFolder) {
    auto dir = std::filesystem::temp_directory_path() / ("tessel_atomic_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto path = (dir / "out.json").string();
    write_file_atomically(path, "{}");
    std::ifstream in(path);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(s, "{}");
    int files = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++files;
    EXPECT_EQ(files, 1);
    EXPECT_THROW(write_file_atomically((dir / "missing" / "x.json").string(), "{}"), InputError);
    EXPECT_THROW(write_file_atomically(dir.string(), "{}"), InputError);
    std::filesystem::remove_all(dir);
}

TEST(JsonIo, WritingToADeviceKeepsTheDevice) {
    // Renaming a temporary over /dev/null would replace the device node with a regular file.
    write_file_atomically("/dev/null", "{}");
    EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}
