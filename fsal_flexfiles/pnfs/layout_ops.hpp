// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS metadata-server side of FLEXFILES (RFC 8435): the operations Ganesha calls for
// LAYOUTGET, LAYOUTRETURN, LAYOUTCOMMIT, GETDEVICEINFO and GETDEVICELIST, installed into
// the module's, the export's and the objects' operation tables, and the fencing of
// clients whose layouts conflict with a new writer.
#pragma once

#include "ganesha/ganesha.hpp"
#include "layout/fence_plan.hpp"
#include "layout/grants.hpp"
#include "model/data_files.hpp"
#include "store/layout_store.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::layout {

// Whether this export hands out flex-files layouts (fs_supports(fso_pnfs_mds_supported)):
// it has data servers.
bool export_grants_layouts(const Export* exp) noexcept;

void init_layout_module_ops(fsal_ops& ops) noexcept;
void init_layout_export_ops(export_ops& ops) noexcept;
void init_layout_obj_ops(fsal_obj_ops& ops) noexcept;

// file.cpp's open2 (and reopen2, for open upgrades) calls this after a successful open of
// a regular file: an open for write while other clients hold layouts of the file fences
// their data-server access (new synthetic owner on every data file) and recalls their
// layouts (see fencing.cpp).
void on_open(Export& exp, Handle& handle, struct state_t* open_state,
             fsal_openflags_t openflags) noexcept;

// The opens and delegations that may be granted RW layouts (pnfs/authority.cpp): file.cpp's
// open2 and reopen2 record an open state of a regular file with its access (FSAL_O_WRITE),
// lease_op2 a delegation (FSAL_DELEG_WR: write access; FSAL_DELEG_NONE: returned), close2
// and the export's free_state forget the state. The caller's clientid comes from op_ctx.
void record_open(Export& exp, Handle& handle, struct state_t* state,
                 fsal_openflags_t openflags) noexcept;
void record_delegation(Export& exp, Handle& handle, struct state_t* state,
                       fsal_deleg_t deleg) noexcept;
void forget_state(Export& exp, struct state_t* state) noexcept;

// layoutreturn.cpp calls this for every segment Ganesha disposes of, before the grant leaves
// the registry: an RW layout taken away from its holder (revoked: recall not answered,
// lease expired, client forgotten, export removed) while it still opens the data files is
// fenced like a conflicting open (new owner on every data file, failures marked stale and
// retried), and the file's other layouts, which carry the old owner, are recalled.
void on_layout_ended(Export& exp, Handle& handle, const Grant& grant, SegmentEnd end) noexcept;

// CB_LAYOUTRECALL (clora_changed, queued, never waited for) of every layout of the file
// (layout-store key, fileid) held by any client but `except_client` (0: none): a mirror
// of it went stale, and layouts granted before name it (store/stale_mirrors.hpp). Nothing
// when no layout is out. Needs op_ctx's export (called from FSAL operations).
void recall_layouts(Export& exp, const mds::ObjectKey& key, std::uint64_t file_id,
                    std::uint64_t except_client) noexcept;

// CB_LAYOUTRECALL of the file's RW layouts only (any holder): the resilverer has waited
// on them (mds/resilver.hpp); READ layouts granted since the mark leave the stale mirror
// out and stay. Nothing when no RW layout is out. Needs op_ctx's export.
void recall_rw_layouts_for_resilver(Export& exp, const mds::ObjectKey& key,
                                    std::uint64_t file_id) noexcept;

// When the data path opens, before any client is served: fences every file the layout
// store marks as under an RW layout of the previous instance (layout/rw_grant_marks.hpp),
// then drops the marks. Data files whose SETATTR fails are retried in the background and
// their mirrors marked stale (unless the last in sync), as for any fence.
void fence_previous_rw_layouts(Export& exp) noexcept;

// Before the resilverer copies a mirror on a shared namespace: other MDSs' RW layouts on
// the file (their `marks` on the namespace object) are fenced (new owners on every data
// file, recorded in the store and on the object through its host handle), the marks
// removed, and this MDS's layouts of the file recalled. Needs an op context.
void fence_other_mds_layouts(Export& exp, const mds::ObjectKey& key,
                             const std::vector<std::uint8_t>& host,
                             const std::vector<std::string>& marks) noexcept;

// What a layout stateid's segments were granted as: for LAYOUT_WCC (layout_wcc.cpp), which resolves
// the (deviceid, stateid, filehandle) triples of a report against the data files the
// client's layout names. Call with the object's state lock held (Ganesha holds it around
// the FSAL's layout_wcc method). std::nullopt when the state is not a layout state of this
// FSAL or has no segment.
struct GrantedLayout {
    bool read_write = false;  // some segment has iomode LAYOUTIOMODE4_RW
    std::uint64_t client = 0; // clientid4 of the holder (0: unknown)
    // As the most recent segment named them: its grant's, not a copy, so valid only while
    // the caller holds the layout state's lock (ff_layout_state_lock).
    const mds::DataFileMap* files = nullptr;
};
std::optional<GrantedLayout> granted_layout(struct state_t* layout_state) noexcept;

// Whether some client holds an RW layout of the file (its data files may change behind the
// MDS's back): the proxied I/O path asks it. GETATTR reads Handle::writes_unseen instead.
bool rw_layout_outstanding(const Export& exp, std::uint64_t file_id) noexcept;

// The export's layout counters, name and value, for logs and the admin interface.
std::vector<std::pair<const char*, std::uint64_t>> layout_counters(const Export& exp);

} // namespace flexfiles::layout
