#include "tests/cli/run_tessel.h"
#include "tests/temporary_folder.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}
std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}
}  // namespace

std::string temp_dir(const std::string& name) { return tessel::test::fresh_temporary_folder("tessel_cli_", name); }

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

TesselRun run_tessel(const std::vector<std::string>& args, int timeout_s) {
    static int counter = 0;
    std::string name = "capture_";
    name += std::to_string(::getpid());
    name += '_';
    name += std::to_string(counter++);
    const std::string dir = temp_dir(name);
    // Built by appends: GCC 12 reads `"literal" + std::string` as an overlapping memcpy (-Wrestrict).
    std::string cmd = "timeout ";
    cmd += std::to_string(timeout_s);
    cmd += ' ';
    cmd += quote(TESSEL_BINARY);
    for (const auto& a : args) {
        cmd += ' ';
        cmd += quote(a);
    }
    cmd += " > ";
    cmd += dir;
    cmd += "/out 2> ";
    cmd += dir;
    cmd += "/err < /dev/null";
    int status = std::system(cmd.c_str());
    TesselRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(dir + "/out");
    r.err = slurp(dir + "/err");
    std::filesystem::remove_all(dir);
    return r;
}
