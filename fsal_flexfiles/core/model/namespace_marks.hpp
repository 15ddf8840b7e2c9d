// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The marks MDSs sharing one namespace (Map_In_Namespace, docs/scale-out.md) leave on a
// file's namespace object, beside its map (map_text.hpp), so that each learns what the
// others did to the file:
//
//   flexfiles.stale.<mirror>   = <identity>      the mirror missed a write; every MDS leaves
//                                                it out until one resilvers it
//   flexfiles.rw.<identity>    = 1               that MDS may have RW layouts out on it
//   flexfiles.wr.<identity>    = <until, ms>     that MDS may write it itself (proxied I/O)
//                                                until then (Unix time in milliseconds)
//
// <identity> is the MDS's layout-store identity (16 hex digits, model/naming.hpp). A write
// lease is a time, not a flag, because nothing recalls an MDS's own writes: an MDS renews
// its lease before it writes and never starts a write on a lease about to end, so another
// MDS that sees every lease expired (allowing for clock skew) knows that nobody writes
// behind its back. That is what the resilverer needs before it copies a mirror.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flexfiles::mds {

inline constexpr std::string_view kStaleMarkPrefix = "flexfiles.stale.";
inline constexpr std::string_view kWriterMarkPrefix = "flexfiles.rw.";
inline constexpr std::string_view kWriteLeasePrefix = "flexfiles.wr.";

std::string stale_mark_name(std::uint32_t mirror);
// The mirror a stale mark names; nullopt for any other name (or a malformed one).
std::optional<std::uint32_t> stale_mark_mirror(std::string_view name);

// How long a write lease lasts, when it is renewed, and the clock skew between MDSs that a
// reader allows for. A write through the MDS starts only with at least `renew_below` left,
// and takes at most a few DS_IO_Timeouts (the export refuses a timeout that could outlast
// it: see fits_write_lease).
struct WriteLeaseTimes {
    std::chrono::milliseconds length{30'000};
    std::chrono::milliseconds renew_below{20'000};
    std::chrono::milliseconds skew{5'000};
};

std::string write_lease_value(std::int64_t until_ms);
// The lease's end; nullopt for a value write_lease_value would not have written.
std::optional<std::int64_t> parse_write_lease(std::string_view value);
// Whether a lease ending at `until_ms` may still cover a write, seen at `now_ms` by another
// MDS whose clock may differ by `skew`.
bool write_lease_live(std::int64_t until_ms, std::int64_t now_ms, const WriteLeaseTimes& t);
// Whether the MDS holding a lease ending at `until_ms` must renew it before writing at
// `now_ms`.
bool write_lease_needs_renewal(std::int64_t until_ms, std::int64_t now_ms,
                               const WriteLeaseTimes& t);

} // namespace flexfiles::mds
