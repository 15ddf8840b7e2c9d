// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTCOMMIT (RFC 8881 section 18.42; RFC 8435 section 7: the flex-files lou_body is
// empty, there is nothing layout-specific to commit).
//
// The client's view of what it wrote through the layout becomes the file's: the new size
// (loca_last_write_offset + 1, when the client sends one below 2^64-1 and it is larger)
// and the new mtime (when it sends one) are recorded in the export's attribute cache as a
// LAYOUTCOMMIT barrier (cache/attr_cache.hpp): it never shrinks the file, and it
// supersedes every WCC report older than it. The answer carries the file's size after the commit
// when the commit moved it (locr_newsize). MDCACHE drops its cached attributes after a successful
// LAYOUTCOMMIT, so the next GETATTR asks again and sees it.
//
// Ganesha calls this once per segment of the layout until one call says commit_done; the
// first RW segment does the work. READ segments cannot commit (RFC 8881 18.42.3): they are
// passed over, and a layout with READ segments only commits nothing.
#include "cache/attr_cache.hpp"
#include "export.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"

namespace flexfiles::layout {

nfsstat4 layoutcommit(fsal_obj_handle* obj_hdl, XDR*, const fsal_layoutcommit_arg* arg,
                      fsal_layoutcommit_res* res) noexcept {
    Export* exp = current_export();
    if (exp == nullptr)
        return NFS4ERR_SERVERFAULT;
    if (arg->type != LAYOUT4_FLEX_FILES)
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    if (arg->segment.io_mode != LAYOUTIOMODE4_RW)
        return NFS4_OK; // not this segment; Ganesha tries the next one
    ExportLayouts& state = exp->layouts();
    const std::uint64_t file = file_id_of(*obj_hdl);

    std::optional<std::uint64_t> new_size;
    // The Linux client sends 2^64-1 when it knows no last write (pnfs_layoutcommit_inode,
    // plh_lwb == 0): that is no size at all, not a file of 2^64-1 bytes.
    if (arg->new_offset && arg->last_write == NFS4_UINT64_MAX) {
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES LAYOUTCOMMIT file %" PRIu64 ": last write offset 2^64-1, no size",
                 file);
    } else if (arg->new_offset) {
        // last_write is the offset of the last byte written; it must lie in the segment.
        const pnfs_segment& seg = arg->segment;
        if (arg->last_write < seg.offset ||
            (seg.length != NFS4_UINT64_MAX && arg->last_write - seg.offset >= seg.length)) {
            LogInfo(COMPONENT_PNFS,
                    "FLEXFILES LAYOUTCOMMIT file %" PRIu64 ": last write offset %" PRIu64
                    " outside the layout",
                    file, arg->last_write);
            return NFS4ERR_INVAL;
        }
        new_size = arg->last_write + 1;
    }
    std::optional<wcc::NfsTime> mtime;
    if (arg->time_changed) {
        mtime = wcc::NfsTime::from_parts(arg->new_time.seconds, arg->new_time.nseconds);
        if (!mtime)
            LogInfo(COMPONENT_PNFS,
                    "FLEXFILES LAYOUTCOMMIT file %" PRIu64 ": mtime %" PRId64 ".%u is not a "
                    "valid time, ignored",
                    file, static_cast<std::int64_t>(arg->new_time.seconds), arg->new_time.nseconds);
    }

    bump(state.counters.layoutcommits);
    res->commit_done = true;
    res->size_supplied = false;

    wcc::AttrCache* cache = mds_access::cache(*exp);
    if (cache == nullptr) {
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES LAYOUTCOMMIT file %" PRIu64 ": the export has no attribute cache",
                 file);
        return NFS4_OK;
    }
    try {
        std::optional<std::uint64_t> before;
        if (auto m = cache->merged(file); m && m->attrs.has(wcc::kAttrSize))
            before = m->attrs.size;

        const wcc::Outcome outcome = cache->record_layoutcommit(file, new_size, mtime);
        if (outcome == wcc::Outcome::OutOfMemory)
            return NFS4ERR_DELAY;

        std::optional<std::uint64_t> after;
        if (auto m = cache->merged(file); m && m->attrs.has(wcc::kAttrSize))
            after = m->attrs.size;
        else
            after = new_size;
        if (new_size && after && (!before || *after != *before)) {
            res->size_supplied = true;
            res->new_size = *after;
            bump(state.counters.layoutcommit_sizes);
        }
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES LAYOUTCOMMIT file %" PRIu64 ": size %s%" PRIu64 " -> %" PRIu64 "%s",
                 file, before ? "" : "(unknown) ", before.value_or(0), after.value_or(0),
                 mtime ? ", mtime set" : "");
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
    return NFS4_OK;
}

} // namespace flexfiles::layout
