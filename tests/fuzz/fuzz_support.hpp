// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the fuzz targets share: reading a fuzzer's input, the checks that turn a broken
// invariant into a crash the fuzzer records, and the seed corpus each target writes from
// the project's own encoders.
//
// Seeds: a target run with FF_FUZZ_WRITE_SEEDS=<dir> writes its seed corpus into <dir>
// (valid bodies, each truncation of them at every 4-byte step, maximal counts) and exits;
// `cmake --build <fuzz tree> --target ff_fuzz_seeds` does it for every target into
// tests/fuzz/corpus/<target>/, which is committed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace fuzz {

using Bytes = std::vector<std::uint8_t>;

// A broken invariant: say which and abort (libFuzzer keeps the input as a crash).
[[noreturn]] inline void invariant_failed(const char* target, const char* what) {
    std::fprintf(stderr, "fuzz target %s: invariant broken: %s\n", target, what);
    std::abort();
}
#define FUZZ_CHECK(target, cond)                                                                   \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::fuzz::invariant_failed(target, #cond);                                               \
    } while (0)

// Reads a fuzzer's input front to back; past the end everything reads as zero.
class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
    std::uint32_t u32() {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v = v << 8 | u8();
        return v;
    }
    // What is left, as the bytes under test.
    std::span<const std::uint8_t> rest() const {
        return pos_ < size_ ? std::span(data_ + pos_, size_ - pos_)
                            : std::span<const std::uint8_t>{};
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

class SeedWriter {
public:
    explicit SeedWriter(std::string dir) : dir_(std::move(dir)) {}

    // One seed; with truncations, also its prefixes cut at 4-byte steps (the decoders
    // must refuse each one without leaking): every step of the first 256 bytes, then 32
    // cuts spread over the rest (a long owner string need not give a thousand seeds).
    void add(const std::string& name, const Bytes& bytes, bool truncations = true) {
        write(name, bytes);
        if (!truncations)
            return;
        const std::size_t dense = std::min<std::size_t>(bytes.size(), 256);
        const std::size_t step = std::max<std::size_t>(4, (bytes.size() - dense) / 32 / 4 * 4);
        for (std::size_t cut = 0; cut < bytes.size(); cut += cut < dense ? 4 : step)
            write(name + ".cut" + std::to_string(cut), Bytes(bytes.begin(), bytes.begin() + cut));
    }
    // A seed that starts with a selector byte (targets that fuzz several decoders).
    void add(const std::string& name, std::uint8_t selector, const Bytes& bytes,
             bool truncations = true) {
        Bytes b{selector};
        b.insert(b.end(), bytes.begin(), bytes.end());
        add(name, b, truncations);
    }
    std::size_t written() const { return written_; }

private:
    void write(const std::string& name, const Bytes& bytes) {
        std::ofstream out(dir_ + "/" + name, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()),
                  static_cast<std::streamsize>(bytes.size()));
        if (!out) {
            std::fprintf(stderr, "cannot write seed %s/%s\n", dir_.c_str(), name.c_str());
            std::exit(1);
        }
        ++written_;
    }
    std::string dir_;
    std::size_t written_ = 0;
};

// Called from LLVMFuzzerInitialize: with FF_FUZZ_WRITE_SEEDS set, write the seeds and exit.
inline void write_seeds_if_asked(const char* target, const std::function<void(SeedWriter&)>& make) {
    const char* dir = std::getenv("FF_FUZZ_WRITE_SEEDS");
    if (dir == nullptr || *dir == '\0')
        return;
    SeedWriter w(dir);
    make(w);
    std::printf("%s: %zu seeds written to %s\n", target, w.written(), dir);
    std::exit(0);
}

// The target's LLVMFuzzerInitialize: with FF_FUZZ_WRITE_SEEDS set, it writes the seeds
// `make` produces and exits.
#define FF_FUZZ_SEEDS(target, make)                                                                \
    extern "C" int LLVMFuzzerInitialize(int*, char***) {                                           \
        ::fuzz::write_seeds_if_asked(target, make);                                                \
        return 0;                                                                                  \
    }

template <typename Chars> Bytes bytes_of(const Chars& v) {
    Bytes b(v.size());
    if (!v.empty())
        std::memcpy(b.data(), v.data(), v.size());
    return b;
}

} // namespace fuzz
