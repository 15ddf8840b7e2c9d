// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs/xdr/wcc_entries.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace flexfiles::wcc {

bool DecodedBody::decode(const char* bytes, std::size_t len) {
    ff_layout_wcc4_free(&body);
    if (len > LAYOUT_WCC4_BODY_MAX)
        return false;
    return ff_layout_wcc4_decode(bytes, static_cast<u_int>(len), &body);
}

std::pmr::vector<BodyEntry> entries_of(const ff_layout_wcc4& body, std::pmr::memory_resource* mr) {
    std::pmr::vector<BodyEntry> out(mr);
    std::size_t n = 0;
    for (u_int m = 0; m < body.fflw_mirrors.fflw_mirrors_len; ++m)
        n += body.fflw_mirrors.fflw_mirrors_val[m].ffmw_data_servers.ffmw_data_servers_len;
    out.reserve(n);
    for (u_int m = 0; m < body.fflw_mirrors.fflw_mirrors_len; ++m) {
        const ff_mirror_wcc4& mirror = body.fflw_mirrors.fflw_mirrors_val[m];
        for (u_int d = 0; d < mirror.ffmw_data_servers.ffmw_data_servers_len; ++d) {
            const ff_data_server_wcc4& ds = mirror.ffmw_data_servers.ffmw_data_servers_val[d];
            BodyEntry e{.mirror_pos = m,
                        .ds_pos = d,
                        .deviceid = {},
                        .stateid = {},
                        .fhs = std::pmr::vector<std::span<const std::uint8_t>>(mr),
                        .attributes = {}};
            std::copy_n(reinterpret_cast<const std::uint8_t*>(ds.ffdsw_deviceid), e.deviceid.size(),
                        e.deviceid.begin());
            e.stateid.seqid = ds.ffdsw_stateid.seqid;
            std::copy_n(reinterpret_cast<const std::uint8_t*>(ds.ffdsw_stateid.other),
                        e.stateid.other.size(), e.stateid.other.begin());
            e.fhs.reserve(ds.ffdsw_fh_vers.ffdsw_fh_vers_len);
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

} // namespace flexfiles::wcc
