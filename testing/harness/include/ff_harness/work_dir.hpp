// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Where a test's servers live on disk, and which loopback addresses they bind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace flexfiles::harness {

// The root of every test's working folder: $FF_TEST_WORK_ROOT, else the build tree's
// test-work/ folder (compiled in).
std::filesystem::path work_root();

// <work_root>/<Suite>.<Test> for the running GoogleTest test, <work_root>/<Suite> in
// SetUpTestSuite, <work_root>/adhoc outside GoogleTest.
// Wiped the first time it is asked for in this process, then kept, logs included, so a
// failed test leaves everything behind for inspection until its next run.
std::filesystem::path test_work_dir();

// Removes `dir` and recreates it empty.
void fresh_dir(const std::filesystem::path& dir);

// The last `n` lines of a text file (a server's log); empty when it cannot be read.
std::vector<std::string> last_lines(const std::filesystem::path& file, std::size_t n);

// The value of a path-like setting: $env_name if set, else the compiled-in default.
std::string setting(const char* env_name, const char* compiled_default);

// The ganesha.nfsd binary and the FSAL plugins folder the servers use ($FF_GANESHA_NFSD,
// $FF_PLUGINS_DIR override the build-tree defaults). Throw if they do not exist.
std::filesystem::path ganesha_nfsd_binary();
std::filesystem::path plugins_dir();
// Ganesha's build tree (FF_GANESHA_BINARY_DIR): its tools (ganesha-rados-grace) and the
// RADOS recovery module (SAL/libganesha_rados_recov.so) that ganesha.nfsd loads by name.
std::filesystem::path ganesha_build_dir();

// Where the harness keeps its machine-wide lock files: $FF_SLOT_LOCK_DIR, else
// /tmp/ff-harness-slots (shared by every build tree on the machine, on purpose).
std::filesystem::path lock_dir();

// A block of loopback addresses 127.<slot>.0.1 ... 127.<slot>.0.254 owned by this process,
// so tests can run in parallel (each server binds its own address; ports repeat). The
// slot is held with flock(2) on <lock_dir()>/<slot>.lock,
// released when the block is destroyed or the process dies.
class AddressBlock {
public:
    static constexpr unsigned kFirstSlot = 16;
    static constexpr unsigned kLastSlot = 250;

    // Takes the first free slot; throws std::runtime_error if none is.
    static AddressBlock acquire();

    AddressBlock(AddressBlock&& other) noexcept;
    AddressBlock& operator=(AddressBlock&& other) noexcept;
    AddressBlock(const AddressBlock&) = delete;
    AddressBlock& operator=(const AddressBlock&) = delete;
    ~AddressBlock();

    unsigned slot() const { return slot_; }
    // "127.<slot>.0.<host>", host in 1..254 (throws std::out_of_range otherwise).
    std::string address(unsigned host) const;

private:
    AddressBlock(unsigned slot, int lock_fd) : slot_(slot), lock_fd_(lock_fd) {}
    unsigned slot_ = 0;
    int lock_fd_ = -1;
};

} // namespace flexfiles::harness
