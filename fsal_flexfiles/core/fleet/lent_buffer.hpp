// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A caller's buffer lent to requests that may run on a data server's event thread: a
// proxied READ's replies are copied into the buffer Ganesha sends (ReadSink), and a
// proxied WRITE is encoded from the buffer Ganesha received (WriteSource). Neither goes
// through a 1 MiB vector of ours. Such a vector cost an allocation and a copy per request;
// as the allocator's arena trimmed and grew again, it also cost a page fault per 4 KiB
// (README.md has what it measured).
//
// The caller may stop waiting before the requests are done (its bounded wait ran out), and
// then its buffer goes away. It closes the buffer first. A reply that comes later copies
// nothing, and a WRITE not yet encoded is not sent. A shared lock is held while the bytes
// are in use (the mirrors of one WRITE may encode at once), so close() waits for every
// copy or encoding under way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <type_traits>
#include <vector>

namespace flexfiles::fleet {

template <class Byte> class LentBuffer {
public:
    explicit LentBuffer(std::span<Byte> bytes) : bytes_(bytes) {}
    // Bytes of its own, for a caller that hands them over: never closed.
    explicit LentBuffer(std::vector<std::uint8_t> owned) requires std::is_const_v<Byte>
        : owned_(std::move(owned)), bytes_(owned_) {}
    LentBuffer(const LentBuffer&) = delete;
    LentBuffer& operator=(const LentBuffer&) = delete;

    std::size_t size() const noexcept { return bytes_.size(); }

    // Runs f(bytes) unless the buffer is closed: whether it ran.
    template <class F> bool use(F&& f) {
        std::shared_lock lk(mu_);
        if (!open_)
            return false;
        f(bytes_);
        return true;
    }

    // Copies `bytes` into the buffer from `at` on, as much as fits: the bytes copied, none
    // once the buffer is closed.
    std::size_t fill(std::size_t at,
                     std::span<const std::uint8_t> bytes) requires(!std::is_const_v<Byte>) {
        std::size_t n = 0;
        use([&](std::span<Byte> to) {
            if (at < to.size()) {
                n = std::min(bytes.size(), to.size() - at);
                std::memcpy(to.data() + at, bytes.data(), n);
            }
        });
        return n;
    }

    // The buffer is about to go: nothing uses it from now on.
    void close() {
        std::lock_guard lk(mu_);
        open_ = false;
    }

private:
    std::shared_mutex mu_;
    std::vector<std::uint8_t> owned_;
    std::span<Byte> bytes_;
    bool open_ = true;
};

using ReadSink = LentBuffer<std::uint8_t>;
using WriteSource = LentBuffer<const std::uint8_t>;

} // namespace flexfiles::fleet
