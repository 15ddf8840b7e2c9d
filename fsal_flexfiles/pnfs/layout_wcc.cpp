// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766, NFSv4.2 operation 77) for FLEXFILES: the layout_wcc object method
// Ganesha's op handler calls with the layout body (protocols/), decoded here and applied to
// the export's attribute cache by the rules of core/cache/wcc_apply.hpp. See LAYOUT_WCC.md.
//
// Threading
//   layout_wcc runs on a Ganesha worker; the op handler (protocols/) does not hold the
//   object's state lock. The body is decoded and its owner strings mapped (bounded per body,
//   owner_map.hpp) first, without any lock; the state lock is taken only to read the layout
//   state (its segments, what it was granted) and apply to the RCU cache (lock-free), so
//   that LAYOUTRETURN and fencing cannot interleave with the apply. Credential repairs are
//   submitted after the lock is released (a queue push to the data server's event thread);
//   nothing waits for a data server. A repair's answer
//   runs on the fleet's event thread and touches only the export's cache, counters and
//   repair tracker; the export tears the fleet down before them (export.hpp).
#include "pnfs/layout_wcc.hpp"

#include "cache/ds_attrs.hpp"
#include "cache/owner_map.hpp"
#include "cache/wcc_apply.hpp"
#include "cache/wcc_body.hpp"
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "ganesha/fattr_shim.h"
#include "ganesha/sal_shim.h"
#include "handle.hpp"
#include "pnfs/getattr_overlay.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/xdr/wcc_body_reader.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <memory_resource>
#include <string>
#include <vector>

namespace flexfiles::wcc {

namespace {

// ---------------------------------------------------------------------------------------
// Decoding

// Names (not decimal ids) through Ganesha's idmapper; OwnerMap bounds how many per body.
std::optional<std::uint32_t> idmapper_lookup(std::string_view name, bool group) {
    std::uint32_t id = 0;
    if (ff_wcc_name_to_id(name.data(), name.size(), group ? 1 : 0, &id) == 0)
        return id;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Credential repairs

void send_repairs(Export& exp, const mds::DataFileMap& map,
                  const std::vector<CredentialRepair>& repairs) {
    AttrCache* cache = &exp.cache();
    WccCounters* counters = &exp.wcc_counters();
    RepairTracker* tracker = &exp.repairs();
    for (const CredentialRepair& r : repairs) {
        const mds::DataFile& df = map.files[r.data_file];
        std::shared_ptr<fleet::DataServer> ds = exp.fleet().find(df.ds_id);
        LogEvent(COMPONENT_PNFS,
                 "%s: fileid %" PRIu64 " data file %s on ds %" PRIu64
                 ": a client reports owner %u:%u, the layout says %u:%u; setting it back",
                 exp.label().c_str(), map.file_id, df.name.c_str(), df.ds_id, r.reported_uid,
                 r.reported_gid, r.expected_uid, r.expected_gid);
        if (!ds || df.fh.empty()) {
            counters->add(WccCounters::kCredRepairsFailed);
            tracker->end(r.key);
            continue;
        }
        counters->add(WccCounters::kCredRepairsSent);
        fleet::SetAttrs set;
        set.uid = r.expected_uid;
        set.gid = r.expected_gid;
        const std::int64_t issued = monotonic_now_ns();
        const std::string what =
            exp.label() + ": fileid " + std::to_string(map.file_id) + " data file " + df.name;
        ds->setattr(df.fh, set, fleet::Deadline{},
                    [cache, counters, tracker, key = r.key, issued,
                     what](fleet::DsResult<fleet::SetattrResult> res) {
                        if (res.ok()) {
                            counters->add(WccCounters::kCredRepairsDone);
                            // The data server's post-op attributes replace the wrong owner.
                            if (res.value.attrs)
                                cache->apply_ds_getattr(key, mds::to_cache_attrs(*res.value.attrs),
                                                        issued);
                        } else {
                            counters->add(WccCounters::kCredRepairsFailed);
                            LogWarn(COMPONENT_PNFS, "%s: owner repair failed: %s", what.c_str(),
                                    res.status.message.c_str());
                        }
                        tracker->end(key);
                    });
    }
}

// ---------------------------------------------------------------------------------------
// layout_wcc

nfsstat4 to_nfsstat4(BodyStatus s) {
    switch (s) {
    case BodyStatus::Ok:
        return NFS4_OK;
    case BodyStatus::BadXdr:
        return NFS4ERR_BADXDR;
    case BodyStatus::Inval:
        return NFS4ERR_INVAL;
    }
    return NFS4ERR_SERVERFAULT;
}

namespace {

// Whether a conflicting open fenced the layout since it was granted: one of its data files
// now has other fencing credentials than the layout carries.
bool layout_fenced(const mds::DataFileMap& granted, const mds::DataFileMap& now) {
    for (const mds::DataFile& g : granted.files)
        for (const mds::DataFile& n : now.files)
            if (g.ds_id == n.ds_id &&
                (g.fencing_uid != n.fencing_uid || g.fencing_gid != n.fencing_gid) &&
                g.fh == n.fh) // last: a layout is rarely fenced, and this compares bytes
                return true;
    return false;
}

// The state lock of the layout state's object for one scope (Ganesha's STATELOCK_lock,
// through the C shim); held() is false when the state has no object any more.
class StateLock {
public:
    explicit StateLock(state_t* state) : obj_(ff_layout_state_lock(state)) {}
    ~StateLock() { ff_layout_state_unlock(obj_); }
    StateLock(const StateLock&) = delete;
    StateLock& operator=(const StateLock&) = delete;
    bool held() const { return obj_ != nullptr; }

private:
    fsal_obj_handle* obj_;
};

} // namespace

nfsstat4 apply_body(Export* exp, fsal_obj_handle* obj_hdl, state_t* state, const gsh_buffdesc* body,
                    fsal_attrlist* changed) noexcept {
    WccCounters& counters = exp->wcc_counters();
    try {
        // The entries and their decoded values live in an arena on this frame for bodies of
        // a few mirrors (what clients send); larger ones spill to the heap. The entries
        // point into the body's bytes, which the compound's arguments hold.
        std::array<std::byte, 4096> arena_bytes;
        std::pmr::monotonic_buffer_resource arena(arena_bytes.data(), arena_bytes.size());
        const std::size_t len = body != nullptr && body->addr != nullptr ? body->len : 0;
        const auto* bytes = static_cast<const std::uint8_t*>(len != 0 ? body->addr : nullptr);
        const std::optional<std::pmr::vector<BodyEntry>> read = read_wcc_body({bytes, len}, &arena);
        if (!read) {
            counters.add(WccCounters::kOps);
            counters.add(WccCounters::kOpsBadXdr);
            LogInfo(COMPONENT_PNFS,
                    "%s: LAYOUT_WCC for fileid %" PRIu64
                    ": the %zu-byte body is not an ff_layout_wcc4: NFS4ERR_BADXDR",
                    exp->label().c_str(), obj_hdl->fileid, len);
            return NFS4ERR_BADXDR;
        }
        const std::pmr::vector<BodyEntry>& entries = *read;

        // Values and owner strings, before any lock: a body's worth of idmapper lookups must
        // not hold up the file's other state operations.
        OwnerMap owners(idmapper_lookup);
        const Validation validated = validate_entries(entries, table1_decoder(owners), &arena);
        counters.add(WccCounters::kOwnerLookups, owners.lookups());
        counters.add(WccCounters::kOwnersUnknown, owners.unknown());
        if (owners.unknown() != 0)
            LogInfo(COMPONENT_PNFS,
                    "%s: LAYOUT_WCC for fileid %" PRIu64
                    ": %zu owner string(s) map to no id (%zu past the bound of %zu lookups "
                    "per body): unknown, not compared",
                    exp->label().c_str(), obj_hdl->fileid, owners.unknown(), owners.over_bound(),
                    kMaxOwnerLookupsPerBody);

        Handle* handle = Handle::of(obj_hdl);
        std::shared_ptr<const mds::DataFileMap> map = handle->data_files();
        mds::DataFileMap no_files;
        no_files.file_id = obj_hdl->fileid;
        const mds::DataFileMap& files = map ? *map : no_files;
        ApplyPolicy policy;
        policy.trust_wcc = exp->runtime().policy.trust_wcc();
        const std::int64_t skew_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(exp->config().wcc_max_ctime_skew)
                .count();
        policy.limits.max_ctime = NfsTime{wall_clock_now().ns + skew_ns};
        policy.stale_mirrors = exp->stale_mirrors().of(files.file_id);
        policy.anchor = &handle->cache_anchor;

        ApplyOutcome out;
        LayoutAuthority authority = LayoutAuthority::None;
        {
            StateLock locked(state);
            if (!locked.held()) {
                counters.add(WccCounters::kOps);
                LogInfo(COMPONENT_PNFS,
                        "%s: LAYOUT_WCC for fileid %" PRIu64
                        ": the layout state is going away: NFS4ERR_BAD_STATEID",
                        exp->label().c_str(), obj_hdl->fileid);
                return NFS4ERR_BAD_STATEID;
            }
            const std::optional<layout::GrantedLayout> granted = layout::granted_layout(state);
            // A fenced layout no longer opens its data files: what its holder reports may not
            // set the size or times (RFC 8435 section 2.2: the MDS revoked its access). Its
            // stateid is still valid, and RFC 9766 section 3.4.1 expects exactly this report
            // after the data servers answered NFS4ERR_ACCESS: OK, nothing applied.
            if (granted && map && layout_fenced(*granted->files, *map)) {
                counters.add(WccCounters::kOps);
                counters.add(WccCounters::kOpsFenced);
                LogInfo(COMPONENT_PNFS,
                        "%s: LAYOUT_WCC for fileid %" PRIu64
                        " through a layout fenced since it was granted: nothing applied",
                        exp->label().c_str(), obj_hdl->fileid);
                return NFS4_OK;
            }
            authority = !granted              ? LayoutAuthority::None
                        : granted->read_write ? LayoutAuthority::ReadWrite
                                              : LayoutAuthority::Read;
            if (!map)
                counters.add(WccCounters::kOpsNoDataFiles);
            out = apply_layout_wcc(exp->cache(), files, granted ? granted->files : nullptr, entries,
                                   validated, authority, policy, exp->repairs(), counters);
        }

        if (out.status != BodyStatus::Ok) {
            LogInfo(COMPONENT_PNFS, "%s: LAYOUT_WCC for fileid %" PRIu64 ": %s: %s",
                    exp->label().c_str(), obj_hdl->fileid, out.why.c_str(), to_string(out.status));
            return to_nfsstat4(out.status);
        }
        if (out.cache.out_of_memory) {
            LogWarn(COMPONENT_PNFS, "%s: LAYOUT_WCC for fileid %" PRIu64 ": out of memory",
                    exp->label().c_str(), obj_hdl->fileid);
            return NFS4ERR_DELAY;
        }
        LogDebug(COMPONENT_PNFS,
                 "%s: LAYOUT_WCC fileid %" PRIu64 " (%s layout): %zu entries, %u applied, %u "
                 "stale, %u unauthorised, %u unmatched, %u empty, %u future ctime, %u stale "
                 "mirror%s",
                 exp->label().c_str(), obj_hdl->fileid,
                 authority == LayoutAuthority::ReadWrite ? "RW"
                 : authority == LayoutAuthority::Read    ? "READ"
                                                         : "no",
                 entries.size(), out.cache.applied, out.cache.ignored_stale,
                 out.cache.ignored_unauthorised, out.unmatched, out.empty, out.cache.ignored_future,
                 out.stale_mirror, out.untrusted ? " (Trust_WCC = false: ignored)" : "");
        if (out.cache.ignored_future != 0 || out.stale_mirror != 0)
            LogInfo(COMPONENT_PNFS,
                    "%s: LAYOUT_WCC for fileid %" PRIu64
                    ": %u entr(y/ies) with a time_metadata more than %lld s ahead of this "
                    "server's clock and %u for a stale mirror ignored",
                    exp->label().c_str(), obj_hdl->fileid, out.cache.ignored_future,
                    static_cast<long long>(exp->config().wcc_max_ctime_skew.count()),
                    out.stale_mirror);
        // MDCACHE keeps trusting its attributes through LAYOUT_WCC (patches 0004, 0022): it
        // is told what changed, after the state lock is gone (it takes its own locks). A
        // report that only renewed what the cache held (a client repeating itself) changes
        // nothing MDCACHE holds or will ask for.
        if (out.cache.changed != 0)
            push_data_attrs_to_mdcache(*exp, *handle, changed);
        if (!out.repairs.empty())
            send_repairs(*exp, files, out.repairs);
        return NFS4_OK;
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: LAYOUT_WCC for fileid %" PRIu64 ": %s", exp->label().c_str(),
                obj_hdl->fileid, e.what());
        return NFS4ERR_SERVERFAULT;
    }
}

nfsstat4 layout_wcc(fsal_obj_handle* obj_hdl, layouttype4 type, state_t* state,
                    const gsh_buffdesc* body, fsal_attrlist* changed) noexcept {
    Export* exp = current_export();
    if (type != LAYOUT4_FLEX_FILES)
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    if (exp == nullptr || !export_supports_layout_wcc(exp))
        return NFS4ERR_NOTSUPP;
    return apply_body(exp, obj_hdl, state, body, changed);
}

} // namespace

bool export_supports_layout_wcc(const Export* exp) noexcept {
    return exp != nullptr && layout::export_grants_layouts(exp);
}

void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept {
    ops.layout_wcc = layout_wcc;
}

} // namespace flexfiles::wcc
