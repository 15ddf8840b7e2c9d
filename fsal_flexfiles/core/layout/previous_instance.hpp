// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Layouts of the MDS's previous instance. After a restart, clients of the previous
// instance may still write to the data servers through the layouts it granted: until they
// learn of the restart (their next SEQUENCE), or for up to a lease when they cannot reach
// the MDS. A crash fences nothing, so the data servers take those writes. Their
// LAYOUTCOMMIT and LAYOUT_WCC cannot be applied (the layouts are gone: NFS4ERR_BADLAYOUT),
// and no grant says "writes unseen" (layout/grants.hpp): the data servers are the only
// witness of what they wrote.
//
// So, from the start until the server is out of grace (every client of the previous
// instance has reclaimed, or the grace period is over) and one lease has passed, GETATTR
// treats every file as under an RW layout: a cached answer serves for WCC_Max_Age, then
// the data servers are asked. After that window, an answer learned inside it is not the
// data servers' last word: the file's first GETATTR asks them once more.
//
// A layout store that held no file at the start has no previous instance's layouts to
// fear: no window. Thread-safe; what GETATTR calls is one acquire load once closed.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace flexfiles::layout {

class PreviousInstanceWindow {
public:
    // At the export's start: whether the store held files, the monotonic time, the lease.
    void start(bool had_files, std::int64_t now_ns, std::int64_t lease_ns) noexcept;

    struct View {
        bool open = false;                  // previous layouts may be writing now
        std::int64_t relearn_before_ns = 0; // answers learned before this are not final
    };
    // `in_grace` is asked only while the window may still be open.
    View at(std::int64_t now_ns, bool (*in_grace)()) noexcept;

private:
    static constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();
    std::int64_t earliest_close_ns_ = 0; // the start plus one lease
    // When the window closed (monotonic ns); 0: there was none; kOpen: not closed yet.
    std::atomic<std::int64_t> closed_at_ns_{0};
};

} // namespace flexfiles::layout
