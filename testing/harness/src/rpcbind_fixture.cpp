// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff_rpcbind_fixture start|stop MARKER
//
// The ctest fixture `rpcbind`: ganesha.nfsd with NFSv3 on exits at startup unless rpcbind
// answers. `start` starts `rpcbind -f -w` only if no portmapper answers on 127.0.0.1:111,
// and records the one it started (pid and kernel start time) in MARKER. `stop` stops only
// that process, and only if the pid still names the same rpcbind; an rpcbind someone else
// started is never touched.
#include "ff_harness/process.hpp"
#include "ff_harness/rpc_ping.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

#ifndef FF_RPCBIND
#define FF_RPCBIND "/usr/sbin/rpcbind"
#endif

namespace fs = std::filesystem;
using namespace flexfiles::harness;

namespace {

struct ProcInfo {
    std::string comm;
    char state = '?';
    unsigned long long start_time = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22nd field)".
std::optional<ProcInfo> proc_info(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat))
        return std::nullopt;
    const auto open = stat.find('(');
    const auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open)
        return std::nullopt;
    ProcInfo info;
    info.comm = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    rest >> info.state;
    std::string field;
    for (int i = 4; i <= 21 && rest >> field; ++i) {
    }
    rest >> info.start_time;
    return info;
}

bool portmapper_answers() {
    return static_cast<bool>(
        rpc_null_ping("127.0.0.1", 111, kPortmapProgram, 2, std::chrono::milliseconds(500)));
}

bool alive(pid_t pid, unsigned long long start_time) {
    const auto info = proc_info(pid);
    return info && info->state != 'Z' && info->start_time == start_time;
}

int start(const fs::path& marker) {
    if (portmapper_answers()) {
        std::cout << "rpcbind fixture: a portmapper already answers on 127.0.0.1:111; "
                     "not starting one\n";
        return 0;
    }
    fs::create_directories(marker.parent_path());
    SpawnOptions spawn;
    spawn.argv = {FF_RPCBIND, "-f", "-w"};
    spawn.output = marker.parent_path() / "rpcbind.log";
    spawn.death_signal = 0; // outlives this program, until `stop`
    spawn.new_session = true;
    ChildProcess rpcbind(spawn);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!portmapper_answers()) {
        if (!rpcbind.running()) {
            std::cerr << "rpcbind fixture: " << FF_RPCBIND << " "
                      << describe_wait_status(*rpcbind.wait_status()) << " (see " << spawn.output
                      << ")\n";
            return 1;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            std::cerr << "rpcbind fixture: rpcbind did not answer on 127.0.0.1:111 in 10 s\n";
            rpcbind.stop();
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto info = proc_info(rpcbind.pid());
    if (!info) {
        std::cerr << "rpcbind fixture: rpcbind " << rpcbind.pid() << " vanished\n";
        return 1;
    }
    std::ofstream(marker) << rpcbind.pid() << " " << info->start_time << "\n";
    std::cout << "rpcbind fixture: started rpcbind pid " << rpcbind.pid() << " (marker " << marker
              << ")\n";
    rpcbind.release();
    return 0;
}

int stop(const fs::path& marker) {
    std::ifstream in(marker);
    pid_t pid = 0;
    unsigned long long start_time = 0;
    if (!(in >> pid >> start_time)) {
        std::cout << "rpcbind fixture: no rpcbind started by the fixture; nothing to stop\n";
        return 0;
    }
    in.close();
    const auto info = proc_info(pid);
    if (!info || info->state == 'Z' || info->start_time != start_time || info->comm != "rpcbind") {
        std::cout << "rpcbind fixture: rpcbind " << pid << " is already gone\n";
        fs::remove(marker);
        return 0;
    }
    kill(pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (alive(pid, start_time) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (alive(pid, start_time)) {
        kill(pid, SIGKILL);
        std::cout << "rpcbind fixture: rpcbind " << pid << " ignored SIGTERM; killed\n";
    } else {
        std::cout << "rpcbind fixture: stopped rpcbind pid " << pid << "\n";
    }
    fs::remove(marker);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::string(argv[1]) != "start" && std::string(argv[1]) != "stop")) {
        std::cerr << "usage: " << argv[0] << " start|stop MARKER_FILE\n";
        return 2;
    }
    const fs::path marker = fs::absolute(argv[2]);
    try {
        return std::string(argv[1]) == "start" ? start(marker) : stop(marker);
    } catch (const std::exception& e) {
        std::cerr << "rpcbind fixture: " << e.what() << "\n";
        return 1;
    }
}
