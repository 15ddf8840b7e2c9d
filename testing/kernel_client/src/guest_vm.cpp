// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_kernel_client/guest_vm.hpp"

#include "ff_harness/work_dir.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace flexfiles::kernel_client {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kSocketDir = "/tmp/ff-kernel-client";

namespace {

std::string base64_encode(const std::string& in) {
    static constexpr char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                           (static_cast<unsigned char>(in[i + 1]) << 8) |
                           static_cast<unsigned char>(in[i + 2]);
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    if (i < in.size()) {
        unsigned v = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size())
            v |= static_cast<unsigned char>(in[i + 1]) << 8;
        out += kAlphabet[v >> 18];
        out += kAlphabet[(v >> 12) & 63];
        out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string base64_decode(const std::string& in) {
    std::string out;
    unsigned acc = 0;
    int bits = 0;
    for (const char c : in) {
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else
            continue; // '=', line breaks
        acc = (acc << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    return out;
}

// A node name no other boot used: the NFSv4 client owner string is built from it.
std::string unique_node_name(const std::string& prefix) {
    static std::atomic<unsigned> boots{0};
    std::random_device rd;
    std::ostringstream name;
    name << prefix << '-' << getpid() << '-' << boots.fetch_add(1) << '-' << std::hex
         << (rd() & 0xffff);
    return name.str();
}

fs::path existing(const char* env_name, const char* compiled, const char* what) {
    const fs::path path = harness::setting(env_name, compiled);
    if (!fs::exists(path))
        throw std::runtime_error(std::string("kernel client: no ") + what + " at " + path.string() +
                                 " (scripts/setup-deps.sh fetches the kernel; "
                                 "the build makes the initramfs; or set " +
                                 env_name + ")");
    return path;
}

} // namespace

fs::path kernel_image() {
    return existing("FF_KERNEL_IMAGE", FF_KERNEL_IMAGE, "kernel image");
}

fs::path kernel_initramfs() {
    return existing("FF_KERNEL_INITRAMFS", FF_KERNEL_INITRAMFS, "initramfs");
}

GuestVm::GuestVm(GuestOptions options) : options_(std::move(options)) {
    dir_ = harness::test_work_dir() / options_.name;
    harness::fresh_dir(dir_);
    node_name_ = unique_node_name("ffk");
    // A UNIX socket path must fit in 108 bytes, which test folders do not: a short one.
    fs::create_directories(kSocketDir);
    socket_path_ = fs::path(kSocketDir) / (node_name_ + ".sock");
    fs::remove(socket_path_);
    const fs::path& socket_path = socket_path_;

    harness::SpawnOptions spawn;
    // QEMU's options, one option and its value to a line.
    // clang-format off
    spawn.argv = {
        "/usr/bin/qemu-system-x86_64",
        // The paravirtual KVM here hangs Debian's kernel at boot: TCG only.
        "-accel", "tcg", "-cpu", "max", "-smp", "1",
        "-m", std::to_string(options_.memory_mib),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-kernel", kernel_image().string(),
        "-initrd", kernel_initramfs().string(),
        "-append", "console=ttyS0 loglevel=4 panic=-1 ff.host=" + node_name_,
        "-serial", "file:" + (dir_ / "console.log").string(),
        "-chardev", "socket,id=control,path=" + socket_path.string() + ",server=on,wait=off",
        "-serial", "chardev:control",
        // User-mode networking only; no option ROM (ipxe is not needed to boot -kernel).
        "-netdev", "user,id=net0",
        "-device", "virtio-net-pci,netdev=net0,romfile=",
    };
    // clang-format on
    spawn.output = dir_ / "qemu.log";
    spawn.stderr_to_stdout = true;
    qemu_ = harness::ChildProcess(spawn);

    const auto deadline = Clock::now() + options_.boot_timeout;
    // QEMU creates the socket before the guest runs; connect before it can say anything.
    while (control_fd_ < 0) {
        if (!qemu_.running())
            throw std::runtime_error("kernel client: QEMU exited at start: " + qemu_log());
        if (Clock::now() > deadline)
            throw std::runtime_error("kernel client: QEMU made no control socket " +
                                     socket_path.string() + ": " + qemu_log());
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
            control_fd_ = fd;
        } else {
            close(fd);
            std::this_thread::sleep_for(50ms);
        }
    }
    for (;;) {
        const std::string line = read_line(deadline);
        if (line.rfind("FF-READY ", 0) == 0) {
            kernel_release_ = line.substr(9);
            break;
        }
        if (line.rfind("FF-WARN ", 0) == 0)
            throw std::runtime_error("kernel client: guest: " + line.substr(8));
    }
}

GuestVm::~GuestVm() {
    stop();
}

void GuestVm::stop() {
    if (control_fd_ >= 0) {
        close(control_fd_);
        control_fd_ = -1;
    }
    qemu_.stop(2s);
    std::error_code ignored;
    fs::remove(socket_path_, ignored);
}

std::string GuestVm::read_line(Clock::time_point deadline) {
    for (;;) {
        const auto eol = pending_.find('\n');
        if (eol != std::string::npos) {
            std::string line = pending_.substr(0, eol);
            pending_.erase(0, eol + 1);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            return line;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left <= 0ms)
            throw std::runtime_error("kernel client: the guest did not answer in time; "
                                     "console: " +
                                     console_tail());
        pollfd p{control_fd_, POLLIN, 0};
        const int n = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno != EINTR)
            throw std::runtime_error(std::string("kernel client: poll: ") + strerror(errno));
        if (n <= 0) {
            if (!qemu_.running())
                throw std::runtime_error("kernel client: QEMU exited; console: " + console_tail());
            continue;
        }
        char buf[4096];
        const ssize_t got = read(control_fd_, buf, sizeof(buf));
        if (got <= 0)
            throw std::runtime_error("kernel client: the control channel closed; console: " +
                                     console_tail());
        pending_.append(buf, static_cast<std::size_t>(got));
    }
}

GuestResult GuestVm::run(const std::string& script, std::chrono::seconds timeout) {
    if (control_fd_ < 0)
        throw std::runtime_error("kernel client: the guest is stopped");
    const unsigned id = next_id_++;
    const std::string request = "RUN " + std::to_string(id) + ' ' + base64_encode(script) + '\n';
    for (std::size_t sent = 0; sent < request.size();) {
        const ssize_t n = write(control_fd_, request.data() + sent, request.size() - sent);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw std::runtime_error(std::string("kernel client: write: ") + strerror(errno));
        sent += static_cast<std::size_t>(n);
    }
    const auto deadline = Clock::now() + timeout;
    const std::string out_tag = "OUT " + std::to_string(id);
    const std::string end_tag = "END " + std::to_string(id) + ' ';
    std::string encoded;
    bool in_output = false;
    try {
        for (;;) {
            const std::string line = read_line(deadline);
            if (line == out_tag) {
                in_output = true;
            } else if (line.rfind(end_tag, 0) == 0) {
                GuestResult result;
                result.status = std::stoi(line.substr(end_tag.size()));
                result.output = base64_decode(encoded);
                return result;
            } else if (in_output) {
                encoded += line;
            }
        }
    } catch (const std::runtime_error& e) {
        // A script that hangs (an NFS call that never returns) cannot be interrupted from
        // outside: the guest is done for.
        stop();
        throw std::runtime_error(std::string(e.what()) + "\nscript:\n" + script);
    }
}

std::string GuestVm::must(const std::string& script, std::chrono::seconds timeout) {
    GuestResult r = run(script, timeout);
    if (!r.ok())
        throw std::runtime_error("kernel client: exit status " + std::to_string(r.status) +
                                 "\nscript:\n" + script + "\noutput:\n" + r.output);
    return r.output;
}

std::string GuestVm::qemu_log() const {
    std::ifstream in(dir_ / "qemu.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string GuestVm::console_tail(std::size_t lines) const {
    std::ifstream in(console_log());
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);)
        all.push_back(line);
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        out += all[i] + '\n';
    return out;
}

} // namespace flexfiles::kernel_client
