// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A child process owned by a test: started with fork/execve, tied to the test's life by a
// parent-death signal, stopped by PID (SIGTERM, then SIGKILL after a grace period).
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace flexfiles::harness {

struct SpawnOptions {
    // argv[0] is the program, an absolute path (no PATH search).
    std::vector<std::string> argv;
    // Added to, or overriding, the test process's environment.
    std::map<std::string, std::string> env;
    // Where the child's stdout and stderr go (appended); empty means /dev/null.
    std::filesystem::path output;
    // If >= 0, the child's stdout is this descriptor instead (e.g. a pipe's write end).
    int stdout_fd = -1;
    // Send stderr where stdout goes (instead of `output`).
    bool stderr_to_stdout = false;
    // Sent to the child when the thread that spawned it dies (PR_SET_PDEATHSIG). SIGKILL,
    // because a SIGSTOPped process never acts on SIGTERM and a server stuck in shutdown
    // must not outlive a killed test. 0 disables it (detached daemons).
    int death_signal = SIGKILL;
    // Start the child in its own session (setsid): for daemons that outlive us.
    bool new_session = false;
};

class ChildProcess {
public:
    ChildProcess() = default;
    // Throws std::system_error if fork fails; an exec failure shows as exit status 127.
    explicit ChildProcess(const SpawnOptions& options);
    ~ChildProcess();
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // True while the child has not exited (reaps it as soon as it has).
    bool running();
    // The raw wait status once the child has exited and was reaped.
    std::optional<int> wait_status() const { return status_; }
    // Waits up to `timeout` for the child to exit.
    std::optional<int> wait_for(std::chrono::milliseconds timeout);
    // kill(pid, sig); false if the child is gone.
    bool signal(int sig);
    // SIGTERM (plus SIGCONT, so a stopped child acts on it), then SIGKILL after `grace`.
    // Returns the wait status; safe to call when already stopped.
    int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
    // Forget the child without stopping it (it keeps running; we no longer reap it).
    pid_t release();

private:
    pid_t pid_ = -1;
    std::optional<int> status_;
};

// "exited with status 2", "killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

} // namespace flexfiles::harness
