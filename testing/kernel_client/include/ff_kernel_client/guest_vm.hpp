// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A real Linux NFS client for a test: Debian 12's packaged kernel booted under QEMU (TCG,
// user-mode networking only) with a busybox initramfs that holds the NFS modules. The
// guest reaches the host's loopback addresses through slirp, so it mounts the test
// cluster's MDS and does pNFS I/O to its data servers. Each run() sends one shell script
// to the guest and returns its exit status and output.
//
//   GuestVm vm;                                      // boots, a new NFSv4 client
//   vm.must("mount -t nfs4 -o vers=4.2 127.16.0.1:/export1 /mnt");
//   auto r = vm.run("md5sum /mnt/f", 60s);
//
// The QEMU process is a ChildProcess of the test (parent-death SIGKILL) and is stopped by
// PID when the object goes away.
#pragma once

#include "ff_harness/process.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace flexfiles::kernel_client {

struct GuestOptions {
    // Names the working folder (<test_work_dir>/<name>) and the guest's node name prefix.
    std::string name = "guest";
    unsigned memory_mib = 768;
    std::chrono::seconds boot_timeout{180};
};

struct GuestResult {
    int status = -1;
    std::string output; // stdout and stderr together (the last 256 KiB)
    bool ok() const { return status == 0; }
};

class GuestVm {
public:
    // Boots the guest and waits until it can mount. Throws std::runtime_error with the
    // console's last lines if QEMU exits or the guest is not ready in time.
    explicit GuestVm(GuestOptions options = {});
    ~GuestVm();
    GuestVm(const GuestVm&) = delete;
    GuestVm& operator=(const GuestVm&) = delete;

    // Runs `script` with /bin/sh in the guest. Throws std::runtime_error if the guest does
    // not answer within `timeout` (it is then stopped: a hung NFS call cannot be undone).
    GuestResult run(const std::string& script,
                    std::chrono::seconds timeout = std::chrono::seconds(120));
    // run(), and throw std::runtime_error with the output unless the status is 0.
    std::string must(const std::string& script,
                     std::chrono::seconds timeout = std::chrono::seconds(120));

    // The guest's node name (unique per boot: a new NFSv4 client each time).
    const std::string& node_name() const { return node_name_; }
    const std::string& kernel_release() const { return kernel_release_; }
    std::filesystem::path console_log() const { return dir_ / "console.log"; }
    std::string console_tail(std::size_t lines = 40) const;
    std::string qemu_log() const; // QEMU's own messages
    pid_t pid() const { return qemu_.pid(); }
    void stop();

private:
    std::string read_line(std::chrono::steady_clock::time_point deadline);

    GuestOptions options_;
    std::filesystem::path dir_;
    std::filesystem::path socket_path_;
    std::string node_name_;
    std::string kernel_release_;
    harness::ChildProcess qemu_;
    int control_fd_ = -1;
    std::string pending_; // bytes read past the last line
    unsigned next_id_ = 1;
};

// The kernel image and the initramfs the guests boot: $FF_KERNEL_IMAGE and
// $FF_KERNEL_INITRAMFS, else the build tree's (the kernel fetched by scripts/setup-deps.sh
// into .cache/kernel/current, the initramfs built from it). Throw if either is missing.
std::filesystem::path kernel_image();
std::filesystem::path kernel_initramfs();

} // namespace flexfiles::kernel_client
