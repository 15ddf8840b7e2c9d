// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout_wcc.hpp"

#include "ganesha_xdr.h"
#include "xdr_stream.hpp"

#include <cstring>
#include <deque>

// The types only (the routines are called from C); also pulls in nfsv41.h.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "nfs4_layout_wcc_xdr.h"
#pragma GCC diagnostic pop

namespace flexfiles::client {

AttrMask layout_wcc_table1_attrs() {
    return {FATTR4_SIZE,        FATTR4_SPACE_USED,  FATTR4_MODE,          FATTR4_OWNER,
            FATTR4_OWNER_GROUP, FATTR4_TIME_ACCESS, FATTR4_TIME_METADATA, FATTR4_TIME_MODIFY};
}

std::vector<char> encode_flex_layout_wcc(const FlexLayoutWcc& body) {
    // C views of the body; everything they point to lives in these containers.
    std::deque<EncodedFattr> attrs;
    std::deque<std::vector<nfs_fh4>> fhs;
    std::deque<std::vector<ff_data_server_wcc4>> servers;
    std::vector<ff_mirror_wcc4> mirrors;
    std::size_t hint = 64;

    for (const MirrorWcc& m : body.mirrors) {
        auto& ds_views = servers.emplace_back();
        for (const DataServerWcc& ds : m.data_servers) {
            ff_data_server_wcc4 v;
            std::memset(&v, 0, sizeof(v));
            std::memcpy(v.ffdsw_deviceid, ds.deviceid.data(), NFS4_DEVICEID4_SIZE);
            v.ffdsw_stateid = ds.stateid;
            auto& fh_views = fhs.emplace_back();
            for (const FileHandle& fh : ds.fh_versions) {
                fh_views.push_back(nfs_fh4{static_cast<u_int>(fh.bytes.size()),
                                           const_cast<char*>(fh.bytes.data())});
                hint += 8 + fh.bytes.size();
            }
            v.ffdsw_fh_vers.ffdsw_fh_vers_len = static_cast<u_int>(fh_views.size());
            v.ffdsw_fh_vers.ffdsw_fh_vers_val = fh_views.data();
            const EncodedFattr& a = attrs.emplace_back(encode_fattr4(ds.attrs));
            v.ffdsw_attributes = a.view();
            hint += 64 + a.values.size();
            ds_views.push_back(v);
        }
        ff_mirror_wcc4 mv;
        mv.ffmw_data_servers.ffmw_data_servers_len = static_cast<u_int>(ds_views.size());
        mv.ffmw_data_servers.ffmw_data_servers_val = ds_views.data();
        mirrors.push_back(mv);
    }
    ff_layout_wcc4 layout;
    layout.fflw_mirrors.fflw_mirrors_len = static_cast<u_int>(mirrors.size());
    layout.fflw_mirrors.fflw_mirrors_val = mirrors.data();
    std::vector<char> out = xdr_encode(
        hint, "ff_layout_wcc4", [&](XDR* x) { return ff_xdr_encode_ff_layout_wcc(x, &layout); });
    if (out.size() > LAYOUT_WCC4_BODY_MAX) {
        throw XdrError("ff_layout_wcc4: " + std::to_string(out.size()) + " bytes exceed " +
                       std::to_string(LAYOUT_WCC4_BODY_MAX));
    }
    return out;
}

Compound& Compound::layout_wcc(const stateid4& layout_stateid, uint32_t layout_type,
                               std::span<const char> body) {
    LAYOUT_WCC4args args;
    std::memset(&args, 0, sizeof(args));
    args.lowa_stateid = layout_stateid;
    args.lowa_type = static_cast<layouttype4>(layout_type);
    args.lowa_body.lowa_body_len = static_cast<u_int>(body.size());
    args.lowa_body.lowa_body_val = const_cast<char*>(body.data());
    std::vector<char> bytes = xdr_encode(64 + body.size(), "LAYOUT_WCC4args", [&](XDR* x) {
        return ff_xdr_encode_layout_wcc_args(x, &args);
    });
    return add_raw(kOpLayoutWcc, std::move(bytes),
                   "LAYOUT_WCC " + format_stateid(layout_stateid) + " type=" +
                       std::to_string(layout_type) + " body=" + std::to_string(body.size()) + "B");
}

} // namespace flexfiles::client
