// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A caller's buffer that READ replies are copied into on the event thread
// (DataServer::read_into), so that a proxied READ's bytes go from libnfs's reply straight
// into the buffer Ganesha sends, with no vector of their own in between. That vector cost
// a 1 MiB allocation and copy per READ on the event thread, and, as the arena's top came
// and went, a page fault per 4 KiB of it (README.md has what it measured).
//
// The caller may stop waiting before the reply comes (its bounded wait ran out) and then
// frees its buffer: it closes the sink first, and a reply that comes later copies nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>

namespace flexfiles::fleet {

class ReadSink {
public:
    explicit ReadSink(std::span<std::uint8_t> buffer) : buffer_(buffer) {}
    ReadSink(const ReadSink&) = delete;
    ReadSink& operator=(const ReadSink&) = delete;

    std::size_t size() const noexcept { return buffer_.size(); }

    // Copies `bytes` to the buffer from `at` on, as much as fits: the bytes copied, none
    // once the sink is closed.
    std::size_t fill(std::size_t at, std::span<const std::uint8_t> bytes) {
        std::lock_guard lk(mu_);
        if (!open_ || at >= buffer_.size())
            return 0;
        const std::size_t n = std::min(bytes.size(), buffer_.size() - at);
        std::memcpy(buffer_.data() + at, bytes.data(), n);
        return n;
    }

    // The buffer is about to go: nothing is copied into it from now on.
    void close() {
        std::lock_guard lk(mu_);
        open_ = false;
    }

private:
    std::mutex mu_; // held while copying, so that close() waits for a copy under way
    std::span<std::uint8_t> buffer_;
    bool open_ = true;
};

} // namespace flexfiles::fleet
