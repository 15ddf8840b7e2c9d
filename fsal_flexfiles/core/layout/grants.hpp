// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Which client holds which layout of which file, as this FSAL granted them, and the
// fencing-id policy. Pure C++ (no Ganesha header): unit-tested alone.
//
// Why the FSAL keeps its own record instead of reading Ganesha's state lists: the layout
// states live on MDCACHE's object (the FSAL's handle has no route to them), and the open
// that has to look (open2, see fencing.cpp) may run with that object's state lock held or
// not, depending on the path. Every granted segment passes through layoutget and every
// disposed one through layoutreturn (client returns, recalls, revocations at lease expiry,
// forgotten layouts, return-on-close, and, with the series' patch 0013, segments whose
// LAYOUTGET failed after the grant: circumstance_unsent), so the record mirrors Ganesha's
// segments exactly.
#pragma once

#include "model/data_files.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace flexfiles::layout {

// layoutiomode4 values.
enum class Iomode : std::uint8_t { Read = 1, ReadWrite = 2 };

// One granted segment: LAYOUTGET stores it as the segment's fsal_seg_data, LAYOUTRETURN
// disposes of it. Immutable once granted.
struct Grant {
    std::uint64_t id = 0;     // unique within its registry
    std::uint64_t file = 0;   // the MDS file's fileid
    std::uint64_t client = 0; // clientid4 of the holder; 0 when LAYOUTGET could not tell
    Iomode iomode = Iomode::Read;
    // The data files exactly as the layout named them (with the fencing ids of the time):
    // what LAYOUT_WCC reports and LAYOUTRETURN errors are matched against.
    mds::DataFileMap files;
};

// writes_unseen() of one file for readers that take no lock (GETATTR): the file's FSAL
// object holds it and the registry keeps it equal to writes_unseen(file), under its lock,
// in every call that is given it. One acquire load tells a GETATTR whether the data servers
// may hold writes the MDS has not seen.
using UnseenFlag = std::atomic<bool>;

class GrantRegistry {
public:
    // Records the grant and gives it its id. The caller keeps ownership of the Grant.
    void add(Grant& grant, UnseenFlag* flag = nullptr);
    // Forgets it; false if it was not recorded.
    bool remove(const Grant& grant, UnseenFlag* flag = nullptr);

    // Clients other than `except` that hold a layout of `file` with `iomode` (or any iomode
    // when nullopt), each once, in grant order. `except` 0 excludes nobody.
    std::vector<std::uint64_t> holders(std::uint64_t file, std::uint64_t except,
                                       std::optional<Iomode> iomode) const;
    std::size_t grants(std::uint64_t file) const;
    std::size_t size() const;

    // Whether the file's data files may hold writes the MDS has not seen: an RW layout is
    // out, or the last one ended (returned, recalled, revoked) and the data servers have
    // not been asked since. Its holder may have written without LAYOUTCOMMIT or LAYOUT_WCC,
    // so GETATTR must ask the data servers before it answers from the cache again.
    bool writes_unseen(std::uint64_t file) const;
    // Sets a new FSAL object's flag to writes_unseen(file).
    void mirror_unseen(std::uint64_t file, UnseenFlag& flag) const;
    // The data servers answered for every data file of `file`, asked at `asked`: if its
    // last RW layout had ended by then, the cached attributes are their word again.
    void data_servers_seen(std::uint64_t file, std::chrono::steady_clock::time_point asked,
                           UnseenFlag* flag = nullptr);
    // The file is gone.
    void forget_unseen(std::uint64_t file, UnseenFlag* flag = nullptr);
    std::size_t files_unseen() const;

private:
    bool rw_granted_locked(std::uint64_t file) const;
    bool writes_unseen_locked(std::uint64_t file) const;
    void mirror_locked(std::uint64_t file, UnseenFlag* flag) const;

    mutable std::mutex mu_;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::uint64_t, std::vector<const Grant*>> by_file_;
    std::size_t count_ = 0;
    // Files whose last RW layout ended (when) with nothing asked of the data servers since.
    std::unordered_map<std::uint64_t, std::chrono::steady_clock::time_point> unseen_;
};

// The next synthetic id after `current` in [min, max], wrapping; min when current lies
// outside the range. An id is reused only after (max - min + 1) fencings of the same file,
// so a client fenced that many generations ago could write again: the range must be large
// (the default is 10^6 ids, see model/config_block.h).
std::uint32_t next_fencing_id(std::uint32_t current, std::uint32_t min, std::uint32_t max) noexcept;

// Per-export counters (relaxed atomics: figures for logs and the admin interface).
struct Counters {
    std::atomic<std::uint64_t> layoutgets_read{0};
    std::atomic<std::uint64_t> layoutgets_rw{0};
    std::atomic<std::uint64_t> layoutgets_refused{0};           // every refusal, of which RW ones:
    std::atomic<std::uint64_t> layoutgets_rw_refused_export{0}; // export not writable
    std::atomic<std::uint64_t> layoutgets_rw_refused_open{0};   // no open for write
    std::atomic<std::uint64_t> layoutgets_rw_refused_access{0}; // permission check failed
    std::atomic<std::uint64_t> segments_returned{0};
    std::atomic<std::uint64_t> segments_unsent{0}; // granted, but the LAYOUTGET failed after
    std::atomic<std::uint64_t> returns_with_body{0};
    std::atomic<std::uint64_t> bad_return_bodies{0};
    std::atomic<std::uint64_t> ds_errors_reported{0}; // ffie_errors entries
    std::atomic<std::uint64_t> ds_access_errors{0};   // of which NFS4ERR_ACCESS / PERM
    std::atomic<std::uint64_t> ds_access_expected{0}; // ... from a fenced (older) layout
    std::atomic<std::uint64_t> ds_owner_repairs{0};   // data-file owners set back
    // Other errors: the reports that made the MDS probe the data server, those beyond the
    // client's budget, a READ layout's WRITE/COMMIT errors, and devices the client's
    // layout does not name (all ignored but counted).
    std::atomic<std::uint64_t> ds_reports_probed{0};
    std::atomic<std::uint64_t> ds_reports_rate_limited{0};
    std::atomic<std::uint64_t> ds_reports_read_layout_writes{0};
    std::atomic<std::uint64_t> ds_reports_unnamed{0};
    // LAYOUTERROR's device_error4s, and those naming none of the export's data servers.
    std::atomic<std::uint64_t> layouterrors{0};
    std::atomic<std::uint64_t> layouterror_unknown_devices{0};
    std::atomic<std::uint64_t> iostats_reports{0};
    std::atomic<std::uint64_t> read_ops{0};
    std::atomic<std::uint64_t> read_bytes{0};
    std::atomic<std::uint64_t> write_ops{0};
    std::atomic<std::uint64_t> write_bytes{0};
    std::atomic<std::uint64_t> layoutcommits{0};
    std::atomic<std::uint64_t> layoutcommit_sizes{0}; // commits that moved the size
    std::atomic<std::uint64_t> getdeviceinfos{0};
    std::atomic<std::uint64_t> fencings{0};          // conflicting opens that fenced
    std::atomic<std::uint64_t> revoke_fencings{0};   // RW layouts ended unreturned, fenced
    std::atomic<std::uint64_t> fenced_data_files{0}; // data files re-owned
    std::atomic<std::uint64_t> fence_failures{0};    // data files that could not be
    // Mirrors marked stale because their fence failed, and failed fences on a file's last
    // in-sync mirror (not marked: see layout/fence_plan.hpp).
    std::atomic<std::uint64_t> fence_stale_marks{0};
    std::atomic<std::uint64_t> fence_failures_in_sync{0};
    std::atomic<std::uint64_t> recalls_sent{0};      // CB_LAYOUTRECALLs queued
    std::atomic<std::uint64_t> recalls_not_found{0}; // nothing left to recall
    std::atomic<std::uint64_t> recalls_failed{0};
};

} // namespace flexfiles::layout
