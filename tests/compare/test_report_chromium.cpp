// The page as a browser draws it: headless Chromium takes a screenshot and the PNG must show the
// charts (non-white and coloured pixels). Skips where Chromium is not installed.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "compare/report_html.h"
#include "tests/compare/png_pixels.h"
#include "tests/compare/report_fixtures.h"

using namespace tessel;
using namespace tessel::test;

namespace {
std::string find_chromium() {
    for (const char* name : {"chromium", "chromium-browser"}) {
        const std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
        if (std::system(probe.c_str()) == 0) return name;
    }
    return "";
}
}  // namespace

TEST(ReportChromium, ScreenshotShowsTheCharts) {
    const std::string chromium = find_chromium();
    if (chromium.empty()) GTEST_SKIP() << "chromium is not on PATH";
    const std::string dir = temp_dir("chromium");
    const json sim = tiny_simulation();
    ReportInputs in;
    in.files = {"sim.json", "run.json", "plan.json"};
    in.simulated = sim;
    in.measured = tiny_measured(sim);
    in.plan_result = tiny_plan_result(sim);
    write_text(dir + "/report.html", render_report(in));

    // Its own profile folder: a headless run must not touch (or wait on) the user's.
    const std::string png = dir + "/shot.png";
    const std::string cmd = "HOME=" + dir + " timeout 90 " + chromium +
                            " --headless --no-sandbox --disable-gpu --user-data-dir=" + dir + "/profile" +
                            " --screenshot=" + png + " --window-size=1200,1600 file://" + dir +
                            "/report.html >" + dir + "/chromium.log 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(std::filesystem::exists(png)) << "exit " << status << "\n" << read_text(dir + "/chromium.log");

    Image img;
    std::string error;
    ASSERT_TRUE(decode_png(read_text(png), img, error)) << error;
    EXPECT_EQ(img.width, 1200);
    EXPECT_EQ(img.height, 1600);
    std::size_t ink = 0, coloured = 0;
    for (std::size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
        const int r = img.rgb[i], g = img.rgb[i + 1], b = img.rgb[i + 2];
        if (r < 235 || g < 235 || b < 235) ++ink;
        // Chart fills, not grey text: channels far apart.
        if (std::max({r, g, b}) - std::min({r, g, b}) > 60) ++coloured;
    }
    const double pixels = double(img.width) * img.height;
    EXPECT_GT(ink / pixels, 0.03) << ink << " non-white pixels";
    EXPECT_GT(coloured / pixels, 0.01) << coloured << " coloured pixels";
}
