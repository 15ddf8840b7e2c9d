// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766, NFSv4.2 operation 77) for FLEXFILES: the layout_wcc object method
// Ganesha's op handler calls with the layout body (protocols/), decoded here and applied to
// the export's attribute cache by the rules of core/cache/wcc_apply.hpp. See LAYOUT_WCC.md.
//
// Threading
//   layout_wcc runs on a Ganesha worker with the object's state lock held: it decodes,
//   applies to the RCU cache (lock-free) and only submits credential repairs (a queue push
//   to the data server's event thread), never waiting for a data server. A repair's answer
//   runs on the fleet's event thread and touches only the export's cache, counters and
//   repair tracker; the export tears the fleet down before them (export.hpp).
#include "pnfs/layout_wcc.hpp"

#include "cache/ds_attrs.hpp"
#include "cache/wcc_apply.hpp"
#include "cache/wcc_body.hpp"
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "ganesha/fattr_shim.h"
#include "handle.hpp"
#include "pnfs/layout_ops.hpp"

extern "C" {
#include "nfs4_layout_wcc_xdr.h"
}

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

namespace flexfiles::wcc {

namespace {

// ---------------------------------------------------------------------------------------
// Decoding

static_assert(FF_WCC_A_SIZE == kAttrSize && FF_WCC_A_SPACE_USED == kAttrSpaceUsed &&
              FF_WCC_A_MODE == kAttrMode && FF_WCC_A_OWNER == kAttrOwner &&
              FF_WCC_A_GROUP == kAttrGroup && FF_WCC_A_ATIME == kAttrAtime &&
              FF_WCC_A_MTIME == kAttrMtime && FF_WCC_A_CTIME == kAttrCtime);

std::optional<NfsTime> time_of(const ff_wcc_time& t) {
    return NfsTime::from_parts(t.sec, t.nsec);
}

const char* nfs4_status_name(int st) {
    switch (st) {
    case NFS4ERR_BADXDR:
        return "NFS4ERR_BADXDR";
    case NFS4ERR_INVAL:
        return "NFS4ERR_INVAL";
    case NFS4ERR_BADOWNER:
        return "NFS4ERR_BADOWNER";
    case NFS4ERR_ATTRNOTSUPP:
        return "NFS4ERR_ATTRNOTSUPP";
    default:
        return "an NFSv4 error";
    }
}

// ffdsw_attributes through Ganesha's fattr4 decoder (SETATTR's; owners via the idmapper).
// Anything it refuses other than BADXDR is NFS4ERR_INVAL for LAYOUT_WCC: BADOWNER and
// ATTRNOTSUPP are not in RFC 9766 Table 2.
BodyStatus decode_with_ganesha(const Fattr4View& f, DsAttrs& out, std::string& why) {
    ff_wcc_attrs a{};
    const int st = ff_wcc_decode_fattr4(f.mask.data(), Fattr4View::kWords,
                                        reinterpret_cast<const char*>(f.values.data()),
                                        static_cast<unsigned>(f.values.size()), &a);
    if (st != NFS4_OK) {
        why = std::string("fattr4 values: ") + nfs4_status_name(st);
        return st == NFS4ERR_BADXDR ? BodyStatus::BadXdr : BodyStatus::Inval;
    }
    out = DsAttrs{};
    out.size = a.size;
    out.space_used = a.space_used;
    out.mode = a.mode;
    out.uid = a.uid;
    out.gid = a.gid;
    out.valid =
        static_cast<std::uint16_t>(a.valid & ~(FF_WCC_A_ATIME | FF_WCC_A_MTIME | FF_WCC_A_CTIME));
    struct {
        std::uint32_t bit;
        const ff_wcc_time& t;
        NfsTime& to;
    } times[] = {{FF_WCC_A_ATIME, a.atime, out.atime},
                 {FF_WCC_A_MTIME, a.mtime, out.mtime},
                 {FF_WCC_A_CTIME, a.ctime, out.ctime}};
    for (auto& t : times) {
        if ((a.valid & t.bit) == 0)
            continue;
        const std::optional<NfsTime> v = time_of(t.t);
        if (!v) {
            why = "a time outside what the server can represent";
            return BodyStatus::Inval;
        }
        t.to = *v;
        out.valid |= static_cast<std::uint16_t>(t.bit);
    }
    return BodyStatus::Ok;
}

// The decoded body, freed with it.
struct DecodedBody {
    ff_layout_wcc4 body{};
    DecodedBody() = default;
    DecodedBody(const DecodedBody&) = delete;
    DecodedBody& operator=(const DecodedBody&) = delete;
    ~DecodedBody() { ff_layout_wcc4_free(&body); }
};

std::vector<BodyEntry> entries_of(const ff_layout_wcc4& body) {
    std::vector<BodyEntry> out;
    for (u_int m = 0; m < body.fflw_mirrors.fflw_mirrors_len; ++m) {
        const ff_mirror_wcc4& mirror = body.fflw_mirrors.fflw_mirrors_val[m];
        for (u_int d = 0; d < mirror.ffmw_data_servers.ffmw_data_servers_len; ++d) {
            const ff_data_server_wcc4& ds = mirror.ffmw_data_servers.ffmw_data_servers_val[d];
            BodyEntry e;
            e.mirror_pos = m;
            e.ds_pos = d;
            std::copy_n(reinterpret_cast<const std::uint8_t*>(ds.ffdsw_deviceid), e.deviceid.size(),
                        e.deviceid.begin());
            e.stateid.seqid = ds.ffdsw_stateid.seqid;
            std::copy_n(reinterpret_cast<const std::uint8_t*>(ds.ffdsw_stateid.other),
                        e.stateid.other.size(), e.stateid.other.begin());
            for (u_int i = 0; i < ds.ffdsw_fh_vers.ffdsw_fh_vers_len; ++i) {
                const nfs_fh4& fh = ds.ffdsw_fh_vers.ffdsw_fh_vers_val[i];
                e.fhs.emplace_back(reinterpret_cast<const std::uint8_t*>(fh.nfs_fh4_val),
                                   fh.nfs_fh4_len);
            }
            const fattr4& fa = ds.ffdsw_attributes;
            for (u_int w = 0; w < fa.attrmask.bitmap4_len && w < Fattr4View::kWords; ++w)
                e.attributes.mask[w] = fa.attrmask.map[w];
            e.attributes.values = {
                reinterpret_cast<const std::uint8_t*>(fa.attr_vals.attrlist4_val),
                fa.attr_vals.attrlist4_len};
            out.push_back(std::move(e));
        }
    }
    return out;
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
        const std::optional<fleet::DsFh> fh = fleet::DsFh::from_bytes(df.fh.data(), df.fh.size());
        LogEvent(COMPONENT_PNFS,
                 "%s: fileid %" PRIu64 " data file %s on ds %" PRIu64
                 ": a client reports owner %u:%u, the layout says %u:%u; setting it back",
                 exp.label().c_str(), map.file_id, df.name.c_str(), df.ds_id, r.reported_uid,
                 r.reported_gid, r.expected_uid, r.expected_gid);
        if (!ds || !fh) {
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
        ds->setattr(*fh, set, fleet::Deadline{},
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
            if (g.ds_id == n.ds_id && g.fh == n.fh &&
                (g.fencing_uid != n.fencing_uid || g.fencing_gid != n.fencing_gid))
                return true;
    return false;
}

} // namespace

nfsstat4 layout_wcc(fsal_obj_handle* obj_hdl, layouttype4 type, state_t* state,
                    const gsh_buffdesc* body) noexcept {
    Export* exp = current_export();
    if (type != LAYOUT4_FLEX_FILES)
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    if (exp == nullptr || !export_supports_layout_wcc(exp))
        return NFS4ERR_NOTSUPP;
    WccCounters& counters = exp->wcc_counters();
    try {
        DecodedBody decoded;
        const u_int len = body != nullptr ? static_cast<u_int>(body->len) : 0;
        const char* bytes = body != nullptr ? static_cast<const char*>(body->addr) : nullptr;
        if (!ff_layout_wcc4_decode(bytes, len, &decoded.body)) {
            counters.add(WccCounters::kOps);
            counters.add(WccCounters::kOpsBadXdr);
            LogInfo(COMPONENT_PNFS,
                    "%s: LAYOUT_WCC for fileid %" PRIu64
                    ": the %u-byte body is not an ff_layout_wcc4: NFS4ERR_BADXDR",
                    exp->label().c_str(), obj_hdl->fileid, len);
            return NFS4ERR_BADXDR;
        }
        const std::vector<BodyEntry> entries = entries_of(decoded.body);

        Handle* handle = Handle::of(obj_hdl);
        std::shared_ptr<const mds::DataFileMap> map = handle->data_files();
        const std::optional<layout::GrantedLayout> granted = layout::granted_layout(state);
        // A fenced layout no longer opens its data files: what its holder reports may not
        // set the size or times (RFC 8435 section 2.2: the MDS revoked its access). Its
        // stateid is still valid, and RFC 9766 section 3.4.1 expects exactly this report
        // after the data servers answered NFS4ERR_ACCESS: OK, nothing applied.
        if (granted && map && layout_fenced(granted->files, *map)) {
            counters.add(WccCounters::kOps);
            counters.add(WccCounters::kOpsFenced);
            LogInfo(COMPONENT_PNFS,
                    "%s: LAYOUT_WCC for fileid %" PRIu64
                    " through a layout fenced since it was granted: nothing applied",
                    exp->label().c_str(), obj_hdl->fileid);
            return NFS4_OK;
        }
        const LayoutAuthority authority = !granted              ? LayoutAuthority::None
                                          : granted->read_write ? LayoutAuthority::ReadWrite
                                                                : LayoutAuthority::Read;
        mds::DataFileMap no_files;
        no_files.file_id = obj_hdl->fileid;
        const mds::DataFileMap& files = map ? *map : no_files;
        if (!map)
            counters.add(WccCounters::kOpsNoDataFiles);

        const ApplyOutcome out = apply_layout_wcc(
            exp->cache(), files, granted ? &granted->files : nullptr, entries, decode_with_ganesha,
            authority, ApplyPolicy{exp->runtime().policy.trust_wcc()}, exp->repairs(), counters);

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
                 "stale, %u unauthorised, %u unmatched, %u empty%s",
                 exp->label().c_str(), obj_hdl->fileid,
                 authority == LayoutAuthority::ReadWrite ? "RW"
                 : authority == LayoutAuthority::Read    ? "READ"
                                                         : "no",
                 entries.size(), out.cache.applied, out.cache.ignored_stale,
                 out.cache.ignored_unauthorised, out.unmatched, out.empty,
                 out.untrusted ? " (Trust_WCC = false: ignored)" : "");
        if (!out.repairs.empty())
            send_repairs(*exp, files, out.repairs);
        return NFS4_OK;
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: LAYOUT_WCC for fileid %" PRIu64 ": %s", exp->label().c_str(),
                obj_hdl->fileid, e.what());
        return NFS4ERR_SERVERFAULT;
    }
}

} // namespace

bool export_supports_layout_wcc(const Export* exp) noexcept {
    return exp != nullptr && layout::export_grants_layouts(exp);
}

void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept {
    ops.layout_wcc = layout_wcc;
}

} // namespace flexfiles::wcc
