// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/process.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace flexfiles::harness {

namespace {

// Everything the child needs, prepared before fork: between fork and execve only
// async-signal-safe calls are allowed.
struct ExecImage {
    std::vector<std::string> argv_storage;
    std::vector<std::string> env_storage;
    std::vector<char*> argv;
    std::vector<char*> envp;

    explicit ExecImage(const SpawnOptions& options) : argv_storage(options.argv) {
        std::map<std::string, std::string> merged;
        for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
            const std::string entry(*e);
            const auto eq = entry.find('=');
            if (eq != std::string::npos)
                merged[entry.substr(0, eq)] = entry.substr(eq + 1);
        }
        for (const auto& [key, value] : options.env)
            merged[key] = value;
        for (const auto& [key, value] : merged)
            env_storage.push_back(key + "=" + value);
        for (auto& a : argv_storage)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env_storage)
            envp.push_back(e.data());
        envp.push_back(nullptr);
    }
};

[[noreturn]] void child_fail(int code) {
    _exit(code);
}

} // namespace

ChildProcess::ChildProcess(const SpawnOptions& options) {
    if (options.argv.empty() || options.argv[0].empty() || options.argv[0][0] != '/')
        throw std::invalid_argument("ChildProcess: argv[0] must be an absolute path");
    ExecImage image(options);
    const std::string output = options.output.string();
    const pid_t parent = getpid();

    const pid_t pid = fork();
    if (pid < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {
        // Child: async-signal-safe calls only.
        if (options.new_session)
            setsid();
        if (options.death_signal != 0) {
            if (prctl(PR_SET_PDEATHSIG, options.death_signal) != 0)
                child_fail(126);
            // The parent may have died before prctl took effect.
            if (getppid() != parent)
                child_fail(126);
        }
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGPIPE, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);

        const int in = open("/dev/null", O_RDONLY);
        const int out = output.empty() ? open("/dev/null", O_WRONLY)
                                       : open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (in < 0 || out < 0)
            child_fail(126);
        dup2(in, 0);
        dup2(options.stdout_fd >= 0 ? options.stdout_fd : out, 1);
        dup2(options.stderr_to_stdout ? 1 : out, 2);
        syscall(SYS_close_range, 3U, ~0U, 0U);
        execve(image.argv[0], image.argv.data(), image.envp.data());
        child_fail(127);
    }
    pid_ = pid;
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0)
        stop();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), status_(other.status_) {
    other.pid_ = -1;
    other.status_.reset();
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        if (pid_ > 0)
            stop();
        pid_ = other.pid_;
        status_ = other.status_;
        other.pid_ = -1;
        other.status_.reset();
    }
    return *this;
}

bool ChildProcess::running() {
    if (pid_ <= 0 || status_)
        return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        status_ = status;
        return false;
    }
    return r == 0;
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
        if (std::chrono::steady_clock::now() >= deadline)
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status_;
}

bool ChildProcess::signal(int sig) {
    if (!running())
        return false;
    return kill(pid_, sig) == 0;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
    if (pid_ <= 0)
        return status_.value_or(0);
    if (running()) {
        kill(pid_, SIGTERM);
        kill(pid_, SIGCONT);
        if (!wait_for(grace)) {
            kill(pid_, SIGKILL);
            int status = 0;
            while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            status_ = status;
        }
    }
    return status_.value_or(0);
}

pid_t ChildProcess::release() {
    const pid_t pid = pid_;
    pid_ = -1;
    return pid;
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    return "wait status " + std::to_string(status);
}

} // namespace flexfiles::harness
