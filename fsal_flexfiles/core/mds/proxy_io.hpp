// SPDX-License-Identifier: LGPL-3.0-or-later
//
// I/O that reaches the MDS itself (clients without a layout: NFSv4.0, 4.1+ without a
// layout, NFSv3 to the MDS), sent on to the file's data files.
//
//   write    every mirror, in parallel, stale ones included (stale_mirrors.hpp). Data is
//            written FILE_SYNC unless the caller asks for UNSTABLE, which it may only do
//            when its client's verifier is the export's ExportWriteVerifier (NFSv4:
//            write_verifier.hpp): every data server's verifier is reported to it, so that
//            a data server that lost unstable data moves the client's verifier. A mirror that
//            fails makes its data server Suspect (report_error). The write succeeds when
//            every in-sync mirror took every byte, or when some did and the others could
//            be marked stale (degraded, logged); it fails, with an error naming the file,
//            the data file and the data server, when no in-sync mirror took it.
//   read     one in-sync mirror, chosen among the Up ones (rotating, to spread reads),
//            falling back to the next in-sync mirror when one fails. Never a stale one.
//   commit   COMMIT on every in-sync mirror (verifiers reported as for write).
//   truncate SETATTR(size) on every mirror, settled as a write is, then the size barrier
//            in the attribute cache.
//
// Post-operation attributes of every reply go into the export's attribute cache as the
// MDS's own knowledge (AttrCache::apply_ds_getattr, ordered by when the request was sent).
//
// All calls run on the caller's thread and wait, bounded, for the data servers' event
// threads: every RPC has a deadline (timeout from when it is sent), so a call takes at
// most (number of chunks) x timeout per mirror tried.
#pragma once

#include "cache/attr_cache.hpp"
#include "fleet/fleet.hpp"
#include "mds/counters.hpp"
#include "mds/write_verifier.hpp"
#include "model/data_files.hpp"
#include "store/stale_mirrors.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <span>
#include <vector>

namespace flexfiles::mds {

struct IoSizes {
    std::uint32_t rsize = 1u << 20;
    std::uint32_t wsize = 1u << 20;
};

struct ProxyReadResult {
    fleet::DsStatus status;
    std::size_t count = 0; // the bytes read into the caller's buffer
    bool eof = false;
    std::uint32_t mirror = 0; // the mirror that answered (the last one tried on failure)
};

class ProxyIo {
public:
    // `sizes` maps a data-server Id to its Rsize/Wsize (missing: 1 MiB). `cache` may be null;
    // without `stale` (null) every mirror counts as in sync and a write fails when any
    // mirror fails. `log` gets the degraded writes.
    ProxyIo(fleet::Fleet& fleet, wcc::AttrCache* cache, DataPathCounters& counters,
            std::map<std::uint64_t, IoSizes> sizes, std::chrono::milliseconds timeout,
            StaleMirrors* stale = nullptr, fleet::LogSink log = {},
            ExportWriteVerifier* verifier = nullptr);

    // `key` is the file's layout-store key (to mark mirrors stale).
    fleet::DsStatus write(const ObjectKey& key, const DataFileMap& map, std::uint64_t offset,
                          std::span<const std::uint8_t> data,
                          fleet::StableHow how = fleet::StableHow::file_sync);
    // Reads into `into` (as much as the file has there), from an in-sync mirror: the data
    // servers' replies are copied straight into it.
    ProxyReadResult read(const DataFileMap& map, std::uint64_t offset,
                         std::span<std::uint8_t> into);
    fleet::DsStatus commit(const DataFileMap& map, std::uint64_t offset, std::uint32_t count);
    fleet::DsStatus truncate(const ObjectKey& key, const DataFileMap& map, std::uint64_t size);

    std::uint32_t rsize(std::uint64_t ds_id) const;
    std::uint32_t wsize(std::uint64_t ds_id) const;

    // A data server added (its sizes) or removed (nullopt) at run time (through dbus).
    void set_io_sizes(std::uint64_t ds_id, std::optional<IoSizes> sizes);

    // The order in which read() tries the mirrors: Up data servers first (starting at a
    // rotating position), then Suspect, then Down or unknown ones. Pure; for tests.
    static std::vector<std::size_t> read_order(const std::vector<fleet::Health>& health,
                                               std::uint64_t rotation);

private:
    // The file's stale mirrors (none without a registry).
    std::vector<std::uint32_t> stale_of(std::uint64_t file_id) const;

    fleet::Fleet& fleet_;
    wcc::AttrCache* cache_;
    DataPathCounters& counters_;
    mutable std::shared_mutex sizes_mu_; // only set_io_sizes writes
    std::map<std::uint64_t, IoSizes> sizes_;
    const std::chrono::milliseconds timeout_;
    std::atomic<std::uint64_t> rotation_{0};
    StaleMirrors* const stale_;
    const fleet::LogSink log_;
    ExportWriteVerifier* const verifier_;
};

} // namespace flexfiles::mds
