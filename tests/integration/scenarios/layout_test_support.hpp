// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the layout and fencing scenarios share: a FLEXFILES cluster (1 MDS, 3 data servers,
// Mirrors = 2), and the pNFS operations a flex-files client sends, built with the client
// library's typed ops and read back with Ganesha's own XDR routines (nfsv41.h), independent
// of the server's encoder in fsal_flexfiles/layout.
#pragma once

#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace flexfiles::layout_test {

using namespace flexfiles::harness;
using namespace flexfiles::client;

using DeviceId = std::array<std::uint8_t, NFS4_DEVICEID4_SIZE>;

constexpr std::uint32_t kFencingMin = 1000000; // the FLEXFILES defaults
constexpr std::uint32_t kFencingMax = 1999999;

inline std::string hex(const DeviceId& d) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (auto b : d) {
        s.push_back(digits[b >> 4]);
        s.push_back(digits[b & 15]);
    }
    return s;
}

// One ff_data_server4 as the client received it.
struct LayoutDs {
    DeviceId deviceid{};
    std::uint32_t efficiency = 0;
    stateid4 stateid{};
    std::vector<Nfs3Fh> fh_vers;
    std::string user, group;

    Nfs3Credentials creds() const {
        return {static_cast<std::uint32_t>(std::stoul(user)),
                static_cast<std::uint32_t>(std::stoul(group))};
    }
};

struct Layout {
    stateid4 stateid{}; // logr_stateid
    bool return_on_close = false;
    std::uint64_t offset = 0, length = 0;
    layoutiomode4 iomode = LAYOUTIOMODE4_READ;
    layouttype4 type = LAYOUT4_NFSV4_1_FILES;
    std::uint64_t stripe_unit = 0;
    std::uint32_t flags = 0, stats_collect_hint = 0;
    std::vector<std::vector<LayoutDs>> mirrors;
};

struct LayoutGetResult {
    std::optional<std::uint32_t> status;
    std::optional<Layout> layout; // when OK and the body decoded
    std::string error;            // why the body did not decode
};

inline std::optional<Layout> decode_ff_layout(const char* body, std::size_t len,
                                              std::string& error) {
    XDR xdrs;
    xdrmem_create(&xdrs, const_cast<char*>(body), static_cast<u_int>(len), XDR_DECODE);
    ff_layout4 wire{};
    const bool ok = xdr_ff_layout4(&xdrs, &wire);
    const bool whole = xdr_getpos(&xdrs) == len;
    xdr_destroy(&xdrs);
    std::optional<Layout> out;
    if (!ok || !whole) {
        error = ok ? "trailing bytes after ff_layout4" : "ff_layout4 does not decode";
    } else {
        out.emplace();
        out->stripe_unit = wire.ffl_stripe_unit;
        out->flags = static_cast<std::uint32_t>(wire.ffl_flags);
        out->stats_collect_hint = wire.ffl_stats_collect_hint;
        for (u_int m = 0; m < wire.ffl_mirrors.ffl_mirrors_len; m++) {
            const ff_mirror4& wm = wire.ffl_mirrors.ffl_mirrors_val[m];
            std::vector<LayoutDs> list;
            for (u_int d = 0; d < wm.ffm_data_servers.ffm_data_servers_len; d++) {
                const ff_data_server4& w = wm.ffm_data_servers.ffm_data_servers_val[d];
                LayoutDs ds;
                std::memcpy(ds.deviceid.data(), w.ffds_deviceid, NFS4_DEVICEID4_SIZE);
                ds.efficiency = w.ffds_efficiency;
                ds.stateid = w.ffds_stateid;
                for (u_int f = 0; f < w.ffds_fh_vers.ffds_fh_vers_len; f++) {
                    const nfs_fh4& fh = w.ffds_fh_vers.ffds_fh_vers_val[f];
                    const auto* p = reinterpret_cast<const std::uint8_t*>(fh.nfs_fh4_val);
                    ds.fh_vers.push_back(Nfs3Fh{{p, p + fh.nfs_fh4_len}});
                }
                ds.user.assign(w.ffds_user.utf8string_val, w.ffds_user.utf8string_len);
                ds.group.assign(w.ffds_group.utf8string_val, w.ffds_group.utf8string_len);
                list.push_back(std::move(ds));
            }
            out->mirrors.push_back(std::move(list));
        }
    }
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_layout4), &wire);
    return out;
}

// PUTFH, LAYOUTGET (whole file).
inline LayoutGetResult layoutget(Session& s, const FileHandle& fh, const stateid4& stateid,
                                 layoutiomode4 iomode, layouttype4 type = LAYOUT4_FLEX_FILES,
                                 std::uint32_t maxcount = 65536) {
    Compound c;
    c.putfh(fh);
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUTGET;
    LAYOUTGET4args& a = op.nfs_argop4_u.oplayoutget;
    a.loga_signal_layout_avail = false;
    a.loga_layout_type = type;
    a.loga_iomode = iomode;
    a.loga_offset = 0;
    a.loga_length = NFS4_UINT64_MAX;
    a.loga_minlength = 0;
    a.loga_stateid = stateid;
    a.loga_maxcount = maxcount;
    c.typed(op, "LAYOUTGET");
    CompoundResult r = s.send(c);
    LayoutGetResult out;
    if (!r.replied()) {
        out.error = r.error;
        return out;
    }
    out.status = r.status_of(1);
    if (out.status != NFS4_OK)
        return out;
    const LAYOUTGET4resok& ok = r.op(1).res.nfs_resop4_u.oplayoutget.LAYOUTGET4res_u.logr_resok4;
    if (ok.logr_layout.logr_layout_len != 1) {
        out.error =
            "expected one layout segment, got " + std::to_string(ok.logr_layout.logr_layout_len);
        return out;
    }
    const layout4& seg = ok.logr_layout.logr_layout_val[0];
    out.layout = decode_ff_layout(seg.lo_content.loc_body.loc_body_val,
                                  seg.lo_content.loc_body.loc_body_len, out.error);
    if (out.layout) {
        out.layout->stateid = ok.logr_stateid;
        out.layout->return_on_close = ok.logr_return_on_close;
        out.layout->offset = seg.lo_offset;
        out.layout->length = seg.lo_length;
        out.layout->iomode = seg.lo_iomode;
        out.layout->type = seg.lo_content.loc_type;
    }
    return out;
}

// PATH created (if absent) and opened for reading and writing.
inline OpenFile create_rw(Session& s, const std::string& path) {
    OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    o.create = true;
    return open_path(s, path, o);
}

// A granted layout or a test failure.
inline Layout must_layoutget(Session& s, const FileHandle& fh, const stateid4& stateid,
                             layoutiomode4 iomode) {
    LayoutGetResult r = layoutget(s, fh, stateid, iomode);
    EXPECT_EQ(r.status, std::optional<std::uint32_t>(NFS4_OK)) << r.error;
    EXPECT_TRUE(r.layout.has_value()) << r.error;
    if (!r.layout)
        throw std::runtime_error("LAYOUTGET failed: " + r.error);
    return *r.layout;
}

struct DeviceAddr {
    std::vector<std::pair<std::string, std::string>> netaddrs; // (netid, uaddr)
    struct Version {
        std::uint32_t version, minor, rsize, wsize;
        bool tightly_coupled;
    };
    std::vector<Version> versions;
};

struct DeviceInfoResult {
    std::optional<std::uint32_t> status;
    std::optional<DeviceAddr> addr;
    layouttype4 type = LAYOUT4_NFSV4_1_FILES;
};

inline DeviceInfoResult getdeviceinfo(Session& s, const DeviceId& dev,
                                      layouttype4 type = LAYOUT4_FLEX_FILES,
                                      std::uint32_t maxcount = 4096) {
    Compound c;
    nfs_argop4 op{};
    op.argop = NFS4_OP_GETDEVICEINFO;
    GETDEVICEINFO4args& a = op.nfs_argop4_u.opgetdeviceinfo;
    std::memcpy(a.gdia_device_id, dev.data(), NFS4_DEVICEID4_SIZE);
    a.gdia_layout_type = type;
    a.gdia_maxcount = maxcount;
    a.gdia_notify_types.bitmap4_len = 0;
    c.typed(op, "GETDEVICEINFO");
    CompoundResult r = s.send(c);
    DeviceInfoResult out;
    if (!r.replied())
        return out;
    out.status = r.status_of(0);
    if (out.status != NFS4_OK)
        return out;
    const device_addr4& da =
        r.op(0).res.nfs_resop4_u.opgetdeviceinfo.GETDEVICEINFO4res_u.gdir_resok4.gdir_device_addr;
    out.type = da.da_layout_type;
    XDR xdrs;
    xdrmem_create(&xdrs, da.da_addr_body.da_addr_body_val, da.da_addr_body.da_addr_body_len,
                  XDR_DECODE);
    ff_device_addr4 wire{};
    if (xdr_ff_device_addr4(&xdrs, &wire) &&
        xdr_getpos(&xdrs) == da.da_addr_body.da_addr_body_len) {
        out.addr.emplace();
        for (u_int i = 0; i < wire.ffda_netaddrs.multipath_list4_len; i++) {
            const netaddr4& n = wire.ffda_netaddrs.multipath_list4_val[i];
            out.addr->netaddrs.emplace_back(n.r_netid, n.r_addr);
        }
        for (u_int i = 0; i < wire.ffda_versions.ffda_versions_len; i++) {
            const ff_device_versions4& v = wire.ffda_versions.ffda_versions_val[i];
            out.addr->versions.push_back({v.ffdv_version, v.ffdv_minorversion, v.ffdv_rsize,
                                          v.ffdv_wsize, v.ffdv_tightly_coupled != 0});
        }
    }
    xdr_destroy(&xdrs);
    xdr_free(reinterpret_cast<xdrproc_t>(xdr_ff_device_addr4), &wire);
    return out;
}

struct CommitResult {
    std::optional<std::uint32_t> status;
    std::optional<std::uint64_t> new_size; // when the server says the size changed
};

inline CommitResult layoutcommit(Session& s, const FileHandle& fh, const stateid4& stateid,
                                 std::optional<std::uint64_t> last_write,
                                 std::optional<nfstime4> mtime = std::nullopt) {
    Compound c;
    c.putfh(fh);
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUTCOMMIT;
    LAYOUTCOMMIT4args& a = op.nfs_argop4_u.oplayoutcommit;
    a.loca_offset = 0;
    a.loca_length = NFS4_UINT64_MAX;
    a.loca_reclaim = false;
    a.loca_stateid = stateid;
    a.loca_last_write_offset.no_newoffset = last_write.has_value();
    if (last_write)
        a.loca_last_write_offset.newoffset4_u.no_offset = *last_write;
    a.loca_time_modify.nt_timechanged = mtime.has_value();
    if (mtime)
        a.loca_time_modify.newtime4_u.nt_time = *mtime;
    a.loca_layoutupdate.lou_type = LAYOUT4_FLEX_FILES;
    c.typed(op, "LAYOUTCOMMIT");
    CompoundResult r = s.send(c);
    CommitResult out;
    if (!r.replied())
        return out;
    out.status = r.status_of(1);
    if (out.status == NFS4_OK) {
        const newsize4& ns =
            r.op(1).res.nfs_resop4_u.oplayoutcommit.LAYOUTCOMMIT4res_u.locr_resok4.locr_newsize;
        if (ns.ns_sizechanged)
            out.new_size = ns.newsize4_u.ns_size;
    }
    return out;
}

// An ff_layoutreturn4 body: one ff_ioerr4 per (deviceid, status), one ff_iostats4 per
// (deviceid, bytes written).
inline std::vector<char>
ff_layoutreturn_body(const std::vector<std::pair<DeviceId, nfsstat4>>& errors,
                     const std::vector<std::pair<DeviceId, std::uint64_t>>& written) {
    std::vector<device_error4> errs(errors.size());
    std::vector<ff_ioerr4> ioerrs(errors.size());
    for (std::size_t i = 0; i < errors.size(); i++) {
        std::memcpy(errs[i].de_deviceid, errors[i].first.data(), NFS4_DEVICEID4_SIZE);
        errs[i].de_status = errors[i].second;
        errs[i].de_opnum = NFS4_OP_WRITE;
        ioerrs[i].ffie_length = NFS4_UINT64_MAX;
        ioerrs[i].ffie_errors.ffie_errors_len = 1;
        ioerrs[i].ffie_errors.ffie_errors_val = &errs[i];
    }
    char empty[] = "";
    std::vector<ff_iostats4> stats(written.size());
    for (std::size_t i = 0; i < written.size(); i++) {
        stats[i].ffis_length = NFS4_UINT64_MAX;
        stats[i].ffis_write.ii_count = 1;
        stats[i].ffis_write.ii_bytes = written[i].second;
        std::memcpy(stats[i].ffis_deviceid, written[i].first.data(), NFS4_DEVICEID4_SIZE);
        stats[i].ffis_layoutupdate.ffl_addr.r_netid = empty;
        stats[i].ffis_layoutupdate.ffl_addr.r_addr = empty;
    }
    ff_layoutreturn4 body{};
    body.fflr_ioerr_report.fflr_ioerr_report_len = static_cast<u_int>(ioerrs.size());
    body.fflr_ioerr_report.fflr_ioerr_report_val = ioerrs.data();
    body.fflr_iostats_report.fflr_iostats_report_len = static_cast<u_int>(stats.size());
    body.fflr_iostats_report.fflr_iostats_report_val = stats.data();
    std::vector<char> buf(4096);
    XDR xdrs;
    xdrmem_create(&xdrs, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
    EXPECT_TRUE(xdr_ff_layoutreturn4(&xdrs, &body));
    buf.resize(xdr_getpos(&xdrs));
    xdr_destroy(&xdrs);
    return buf;
}

struct ReturnResult {
    std::optional<std::uint32_t> status;
    bool stateid_present = false;
    stateid4 stateid{}; // when present: the layout stateid after the return
};

// PUTFH, LAYOUTRETURN4_FILE of the whole file.
inline ReturnResult layoutreturn(Session& s, const FileHandle& fh, const stateid4& stateid,
                                 std::vector<char> body = {},
                                 layoutiomode4 iomode = LAYOUTIOMODE4_ANY) {
    Compound c;
    c.putfh(fh);
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUTRETURN;
    LAYOUTRETURN4args& a = op.nfs_argop4_u.oplayoutreturn;
    a.lora_reclaim = false;
    a.lora_layout_type = LAYOUT4_FLEX_FILES;
    a.lora_iomode = iomode;
    a.lora_layoutreturn.lr_returntype = LAYOUTRETURN4_FILE;
    layoutreturn_file4& f = a.lora_layoutreturn.layoutreturn4_u.lr_layout;
    f.lrf_offset = 0;
    f.lrf_length = NFS4_UINT64_MAX;
    f.lrf_stateid = stateid;
    f.lrf_body.lrf_body_len = static_cast<u_int>(body.size());
    f.lrf_body.lrf_body_val = body.empty() ? nullptr : c.keep(body);
    c.typed(op, "LAYOUTRETURN");
    CompoundResult r = s.send(c);
    ReturnResult out;
    if (!r.replied())
        return out;
    out.status = r.status_of(1);
    if (out.status == NFS4_OK) {
        const layoutreturn_stateid& lrs =
            r.op(1).res.nfs_resop4_u.oplayoutreturn.LAYOUTRETURN4res_u.lorr_stateid;
        out.stateid_present = lrs.lrs_present;
        if (lrs.lrs_present)
            out.stateid = lrs.layoutreturn_stateid_u.lrs_stateid;
    }
    return out;
}

// PUTFH, LAYOUT_WCC (op 77); its status.
inline std::optional<std::uint32_t> layout_wcc(Session& s, const FileHandle& fh,
                                               const stateid4& stateid, std::vector<char> body) {
    Compound c;
    c.putfh(fh);
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUT_WCC;
    LAYOUT_WCC4args& a = op.nfs_argop4_u.oplayout_wcc;
    a.lowa_stateid = stateid;
    a.lowa_type = LAYOUT4_FLEX_FILES;
    a.lowa_body.lowa_body_len = static_cast<u_int>(body.size());
    a.lowa_body.lowa_body_val = body.empty() ? nullptr : c.keep(body);
    c.typed(op, "LAYOUT_WCC");
    CompoundResult r = s.send(c);
    EXPECT_TRUE(r.replied()) << r.error;
    return r.status_of(1);
}

// The cluster every scenario here uses: 3 NFSv3 data servers, the MDS exporting
// FLEXFILES over VFS at /ff with Mirrors = 2.
// What a scenario may change in FlexfilesCluster's cluster.
struct FlexfilesClusterSpec {
    unsigned mirrors = 2;
    bool with_dbus = false;        // a private bus, for the admin CLI
    std::vector<unsigned> only;    // data servers listed (empty: all three)
    std::optional<unsigned> lease; // the MDS's Lease_Lifetime, seconds
    // The export's Attr_Expiration_Time: 0 (MDCACHE asks every time) unless a scenario
    // runs the README's recommended configuration (nullopt: Ganesha's default).
    std::optional<int> attr_expiration_time = 0;
    // The namespace's FSAL block (FlexfilesOptions::sub_fsal; VFS unless a scenario says).
    std::string sub_fsal = FlexfilesOptions{}.sub_fsal;
    std::string flexfiles_extra; // lines inside the FLEXFILES block (FlexfilesOptions::extra)
    // Anything else, applied last (e.g. failover_test::make_failover_member).
    std::function<void(ServerOptions&)> more;
};

class FlexfilesCluster : public ::testing::Test {
protected:
    void SetUp() override { start_cluster(); }

    // 1 MDS exporting /ff (FLEXFILES over VFS) + 3 NFSv3 data servers.
    void start_cluster(const FlexfilesClusterSpec& spec = {}) {
        ClusterOptions options;
        options.with_dbus = spec.with_dbus;
        options.configure_mds = [spec](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
            mds.exports[0].pseudo = "/ff";
            FlexfilesOptions ff;
            ff.mirrors = spec.mirrors;
            ff.only = spec.only;
            ff.attr_expiration_time = spec.attr_expiration_time;
            ff.sub_fsal = spec.sub_fsal;
            ff.extra = spec.flexfiles_extra;
            mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
            mds.log_level = "NIV_EVENT";
            mds.lease_lifetime = spec.lease;
            if (spec.more)
                spec.more(mds);
        };
        cluster_ = std::make_unique<Cluster>(options);
    }

    std::unique_ptr<Session> open_session(std::uint32_t minor = 2) {
        SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = minor;
        return Session::open(o);
    }

    // The cluster's data server a device address names, by its universal address.
    const DataServerInfo* ds_at(const std::string& uaddr) const {
        for (const auto& info : cluster_->ds_info()) {
            const std::string expect = info.address + "." + std::to_string(info.nfs_port >> 8) +
                                       "." + std::to_string(info.nfs_port & 0xff);
            if (expect == uaddr)
                return &info;
        }
        return nullptr;
    }

    // The data server of a layout's data server entry (through GETDEVICEINFO).
    const DataServerInfo* ds_of(Session& s, const LayoutDs& entry) {
        DeviceInfoResult info = getdeviceinfo(s, entry.deviceid);
        if (info.status != NFS4_OK || !info.addr || info.addr->netaddrs.empty())
            return nullptr;
        return ds_at(info.addr->netaddrs[0].second);
    }

    std::unique_ptr<Cluster> cluster_;
};

// Waits up to `timeout` for `done()`.
template <class Pred> bool eventually(Pred done, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; i++)
        v[i] = static_cast<std::uint8_t>(seed + i * 7);
    return v;
}

} // namespace flexfiles::layout_test
