// `tessel report` and `tessel compare` as a user runs them: exit codes, messages, and no output
// file left behind by bad input.
#include <filesystem>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/compare/report_fixtures.h"

using namespace tessel;
using namespace tessel::test;
namespace fs = std::filesystem;

namespace {

struct CliRun {
    int exit_code = -1;
    std::string out, err;
};

std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

CliRun run_tessel(const std::vector<std::string>& args, const std::string& dir) {
    std::string cmd = "timeout 120 ";
    cmd += quote(TESSEL_BINARY);
    for (const auto& a : args) {
        cmd += ' ';
        cmd += quote(a);
    }
    cmd += " >";
    cmd += quote(dir + "/.stdout");
    cmd += " 2>";
    cmd += quote(dir + "/.stderr");
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(dir + "/.stdout");
    r.err = read_text(dir + "/.stderr");
    fs::remove(dir + "/.stdout");
    fs::remove(dir + "/.stderr");
    return r;
}

// Everything in the folder but the inputs: a failed run must leave nothing, not even a temp file.
std::vector<std::string> outputs(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name != "sim.json" && name != "run.json" && name != "plan.json" && name != "other-run.json" &&
            name != "other-plan.json")
            out.push_back(name);
    }
    return out;
}

std::string setup(const std::string& name) {
    const std::string dir = temp_dir(name);
    const json sim = tiny_simulation();
    write_text(dir + "/sim.json", sim.dump(2));
    write_text(dir + "/run.json", tiny_measured(sim).dump(2));
    write_text(dir + "/plan.json", tiny_plan_result(sim).dump(2));
    // Of another run: the measured tiny-gpt at pp 4 instead of the simulated pp 2; a search over
    // A100s instead of H100s.
    json other_run = tiny_measured(sim);
    other_run["plan"]["pp"] = 4;
    write_text(dir + "/other-run.json", other_run.dump(2));
    json other_search = tiny_plan_result(sim);
    for (auto& c : other_search["candidates"]) c["cluster"]["gpu"]["name"] = "A100-SXM4-80GB";
    write_text(dir + "/other-plan.json", other_search.dump(2));
    return dir;
}

}  // namespace

TEST(ReportCli, WritesThePage) {
    const std::string dir = setup("writes");
    const CliRun r = run_tessel({"report", "--simulated", dir + "/sim.json", "--measured", dir + "/run.json", "--plan-result",
                          dir + "/plan.json", "--out", dir + "/report.html"},
                         dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("wrote " + dir + "/report.html"), std::string::npos) << r.out;
    const std::string html = read_text(dir + "/report.html");
    EXPECT_EQ(check_well_formed(html), "");
    EXPECT_NE(html.find("id=\"candidates\""), std::string::npos);
    EXPECT_EQ(outputs(dir), std::vector<std::string>{"report.html"});
}

TEST(ReportCli, BadInputExitsTwoAndWritesNothing) {
    const std::string dir = setup("bad");
    const std::string out = dir + "/report.html";
    struct Case {
        std::vector<std::string> args;
        std::string file, key;
    };
    const std::vector<Case> cases = {
        {{"--simulated", dir + "/plan.json"}, "plan.json", "candidates"},
        {{"--simulated", dir + "/run.json"}, "run.json", "step_times_s"},
        {{"--simulated", dir + "/sim.json", "--measured", dir + "/plan.json"}, "plan.json", "candidates"},
        {{"--simulated", dir + "/sim.json", "--plan-result", dir + "/run.json"}, "run.json", "candidates"},
        {{"--simulated", dir + "/missing.json"}, "missing.json", ""},
        // Another run than the one simulated: both files and the first differing key with both values.
        {{"--simulated", dir + "/sim.json", "--measured", dir + "/other-run.json"}, "sim.json and " + dir + "/other-run.json",
         "not the same run: plan.pp (simulated 2, measured 4)"},
        {{"--simulated", dir + "/sim.json", "--plan-result", dir + "/other-plan.json"}, "other-plan.json and " + dir + "/sim.json",
         "cluster.gpu.name (searched \"A100-SXM4-80GB\", simulated \"H100-SXM\")"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"report"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"--out", out});
        const CliRun r = run_tessel(args, dir);
        EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.err;
        EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(c.key), std::string::npos) << r.err;
        EXPECT_TRUE(outputs(dir).empty()) << c.file;
    }
    // An output folder that does not exist is bad input too.
    const CliRun r = run_tessel({"report", "--simulated", dir + "/sim.json", "--out", dir + "/no/such/report.html"}, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(outputs(dir).empty());
    // An output that is an input would destroy it: refused, the input left as it was.
    const std::string sim_before = read_text(dir + "/sim.json");
    const CliRun over = run_tessel({"report", "--simulated", dir + "/sim.json", "--out", dir + "/sim.json"}, dir);
    EXPECT_EQ(over.exit_code, 2) << over.err;
    EXPECT_NE(over.err.find("the same file as --simulated"), std::string::npos) << over.err;
    EXPECT_EQ(read_text(dir + "/sim.json"), sim_before);
}

TEST(CompareCli, AnotherRunExitsTwoAndPrintsNoTable) {
    const std::string dir = setup("compare-other");
    for (const bool as_json : {false, true}) {
        std::vector<std::string> args = {"compare", "--simulated", dir + "/sim.json", "--measured", dir + "/other-run.json"};
        if (as_json) args.push_back("--json");
        const CliRun r = run_tessel(args, dir);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find(dir + "/sim.json and " + dir + "/other-run.json: not the same run: plan.pp (simulated 2, "
                                                             "measured 4)"),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(r.out, "");  // no rows a script could take for valid errors
    }
}

TEST(ReportCli, HelpHasAnExample) {
    const std::string dir = temp_dir("help");
    const CliRun r = run_tessel({"report", "--help"}, dir);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Example: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--plan-result"), std::string::npos) << r.out;
}

TEST(CompareCli, JsonOnStdout) {
    const std::string dir = setup("compare");
    const CliRun r = run_tessel({"compare", "--simulated", dir + "/sim.json", "--measured", dir + "/run.json", "--json"}, dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    for (const char* k : {"simulated", "measured", "model", "plan", "rows", "verdict", "largest_error"})
        EXPECT_TRUE(j.contains(k)) << k;
    // The fixture's measured step is 1.1 x the simulated one: -1/11 = -9.1%.
    EXPECT_NEAR(j["rows"][0]["error"].get<double>(), 1 / 1.1 - 1, 1e-9);
    const CliRun swapped = run_tessel({"compare", "--simulated", dir + "/run.json", "--measured", dir + "/sim.json"}, dir);
    EXPECT_EQ(swapped.exit_code, 2);
    EXPECT_NE(swapped.err.find("run.json"), std::string::npos) << swapped.err;
}
