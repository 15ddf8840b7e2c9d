// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/work_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

#ifndef FF_TEST_WORK_ROOT
#error "FF_TEST_WORK_ROOT must be defined by the build"
#endif
#ifndef FF_GANESHA_NFSD
#error "FF_GANESHA_NFSD must be defined by the build"
#endif
#ifndef FF_GANESHA_BINARY_DIR
#define FF_GANESHA_BINARY_DIR ""
#endif
#ifndef FF_PLUGINS_DIR
#error "FF_PLUGINS_DIR must be defined by the build"
#endif

namespace fs = std::filesystem;

namespace flexfiles::harness {

std::string setting(const char* env_name, const char* compiled_default) {
    const char* value = std::getenv(env_name);
    return value != nullptr && *value != '\0' ? std::string(value) : std::string(compiled_default);
}

fs::path work_root() {
    return fs::path(setting("FF_TEST_WORK_ROOT", FF_TEST_WORK_ROOT));
}

std::vector<std::string> last_lines(const fs::path& file, std::size_t n) {
    std::ifstream in(file);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);)
        all.push_back(line);
    if (all.size() > n)
        all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(n));
    return all;
}

void fresh_dir(const fs::path& dir) {
    fs::remove_all(dir);
    fs::create_directories(dir);
}

// SetUpTestSuite's folder. ctest runs each test in a process of its own, filtered to that
// one test, and maybe several at once (ctest -j): each process's suite set-up gets the
// test's name, so that two never share (and wipe) one folder. Run by hand, the suite's.
static std::string suite_dir_name(const std::string& suite) {
    const std::string filter = ::testing::GTEST_FLAG(filter);
    const bool one_test =
        filter.rfind(suite + ".", 0) == 0 && filter.find_first_of("*?:-") == std::string::npos;
    return one_test ? filter : suite;
}

fs::path test_work_dir() {
    std::string name = "adhoc";
    const auto* unit = ::testing::UnitTest::GetInstance();
    if (const auto* info = unit->current_test_info())
        name = std::string(info->test_suite_name()) + "." + info->name();
    else if (const auto* suite = unit->current_test_suite()) // SetUpTestSuite
        name = suite_dir_name(suite->name());
    for (char& c : name)
        if (c == '/' || c == ' ')
            c = '_';
    const fs::path dir = work_root() / name;
    static std::set<std::string> wiped;
    if (wiped.insert(name).second)
        fresh_dir(dir);
    else
        fs::create_directories(dir);
    return dir;
}

fs::path ganesha_nfsd_binary() {
    // Ganesha 4.3 links ganesha.nfsd at the top of its build tree; accept the configured
    // path first, then the places a build tree may have it.
    std::vector<fs::path> candidates{setting("FF_GANESHA_NFSD", FF_GANESHA_NFSD)};
    const std::string bindir = FF_GANESHA_BINARY_DIR;
    if (!bindir.empty() && std::getenv("FF_GANESHA_NFSD") == nullptr) {
        candidates.push_back(fs::path(bindir) / "ganesha.nfsd");
        candidates.push_back(fs::path(bindir) / "MainNFSD" / "ganesha.nfsd");
    }
    for (const auto& c : candidates)
        if (access(c.c_str(), X_OK) == 0)
            return c;
    throw std::runtime_error("ganesha.nfsd not found (tried " + candidates.front().string() +
                             "; set FF_GANESHA_NFSD)");
}

fs::path ganesha_build_dir() {
    return setting("FF_GANESHA_BINARY_DIR", FF_GANESHA_BINARY_DIR);
}

fs::path plugins_dir() {
    const fs::path dir = setting("FF_PLUGINS_DIR", FF_PLUGINS_DIR);
    if (!fs::is_directory(dir))
        throw std::runtime_error("FSAL plugins folder " + dir.string() +
                                 " does not exist (set FF_PLUGINS_DIR)");
    return dir;
}

fs::path lock_dir() {
    return setting("FF_SLOT_LOCK_DIR", "/tmp/ff-harness-slots");
}

AddressBlock AddressBlock::acquire() {
    const fs::path locks = lock_dir();
    std::error_code ec;
    fs::create_directories(locks, ec);
    constexpr unsigned count = kLastSlot - kFirstSlot + 1;
    // Start somewhere different in each process so parallel tests rarely contend.
    const unsigned start = static_cast<unsigned>(getpid()) % count;
    for (unsigned i = 0; i < count; ++i) {
        const unsigned slot = kFirstSlot + (start + i) % count;
        const fs::path lock = locks / (std::to_string(slot) + ".lock");
        const int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            throw std::runtime_error("AddressBlock: cannot open " + lock.string() + ": " +
                                     std::strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return AddressBlock(slot, fd);
        close(fd);
    }
    throw std::runtime_error("AddressBlock: all loopback slots in " + locks.string() +
                             " are taken");
}

AddressBlock::AddressBlock(AddressBlock&& other) noexcept
    : slot_(other.slot_), lock_fd_(other.lock_fd_) {
    other.lock_fd_ = -1;
}

AddressBlock& AddressBlock::operator=(AddressBlock&& other) noexcept {
    if (this != &other) {
        if (lock_fd_ >= 0)
            close(lock_fd_);
        slot_ = other.slot_;
        lock_fd_ = other.lock_fd_;
        other.lock_fd_ = -1;
    }
    return *this;
}

AddressBlock::~AddressBlock() {
    if (lock_fd_ >= 0)
        close(lock_fd_);
}

std::string AddressBlock::address(unsigned host) const {
    if (host < 1 || host > 254)
        throw std::out_of_range("AddressBlock: host number must be 1..254, got " +
                                std::to_string(host));
    return "127." + std::to_string(slot_) + ".0." + std::to_string(host);
}

} // namespace flexfiles::harness
