// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The small methods of the cache's value types (attr_types.hpp) and its clock.
#include "cache/attr_types.hpp"

#include <ctime>
#include <limits>

namespace flexfiles::wcc {

namespace {
constexpr std::int64_t kNsPerSec = 1'000'000'000;
} // namespace

std::int64_t monotonic_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

NfsTime wall_clock_now() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return NfsTime{static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec};
}

std::optional<NfsTime> NfsTime::from_parts(std::int64_t seconds, std::uint32_t nseconds) {
    if (nseconds >= kNsPerSec) {
        return std::nullopt;
    }
    std::int64_t ns = 0;
    if (__builtin_mul_overflow(seconds, kNsPerSec, &ns) ||
        __builtin_add_overflow(ns, static_cast<std::int64_t>(nseconds), &ns)) {
        return std::nullopt;
    }
    return NfsTime{ns};
}

std::int64_t NfsTime::seconds() const {
    const std::int64_t s = ns / kNsPerSec;
    return (ns % kNsPerSec < 0) ? s - 1 : s;
}

std::uint32_t NfsTime::nseconds() const {
    const std::int64_t r = ns % kNsPerSec;
    return static_cast<std::uint32_t>(r < 0 ? r + kNsPerSec : r);
}

std::int64_t DataFileAttrs::age_ns(std::int64_t now_ns) const {
    return learned_ns == 0 ? std::numeric_limits<std::int64_t>::max() : now_ns - learned_ns;
}

bool MergedAttrs::older_than(std::int64_t max_age_ns, std::int64_t now_ns) const {
    return learned_ns == 0 || now_ns - learned_ns > max_age_ns;
}

const char* to_string(Source s) {
    switch (s) {
    case Source::None:
        return "none";
    case Source::Wcc:
        return "wcc";
    case Source::DsGetattr:
        return "ds_getattr";
    case Source::LayoutCommit:
        return "layoutcommit";
    case Source::MdsWrite:
        return "mds_write";
    }
    return "?";
}

const char* to_string(Outcome o) {
    switch (o) {
    case Outcome::Applied:
        return "applied";
    case Outcome::AppliedPartly:
        return "applied_partly";
    case Outcome::IgnoredStale:
        return "ignored_stale";
    case Outcome::IgnoredFuture:
        return "ignored_future";
    case Outcome::IgnoredUnauthorised:
        return "ignored_unauthorised";
    case Outcome::IgnoredUnmatched:
        return "ignored_unmatched";
    case Outcome::IgnoredInvalid:
        return "ignored_invalid";
    case Outcome::OutOfMemory:
        return "out_of_memory";
    }
    return "?";
}

const char* to_string(CredCheck c) {
    switch (c) {
    case CredCheck::Match:
        return "match";
    case CredCheck::Mismatch:
        return "mismatch";
    case CredCheck::Unknown:
        return "unknown";
    }
    return "?";
}

} // namespace flexfiles::wcc
