// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS operations of Compound (LAYOUTGET, GETDEVICEINFO, GETDEVICELIST, LAYOUTCOMMIT,
// LAYOUTRETURN, LAYOUTERROR) and their typed results in CompoundResult.
#include "compound.hpp"
#include "flex_layout.hpp"
#include "model/nfs4_names.hpp"
#include "nfs4_names.hpp"

#include <cstring>

namespace flexfiles::client {

namespace {

nfs_argop4 pnfs_op(nfs_opnum4 opnum) {
    nfs_argop4 op;
    std::memset(&op, 0, sizeof(op));
    op.argop = opnum;
    return op;
}

using flexfiles::nfs4::iomode_name;
static_assert(LAYOUTIOMODE4_READ == nfs4::kIomodeRead && LAYOUTIOMODE4_RW == nfs4::kIomodeRw &&
              LAYOUTIOMODE4_ANY == nfs4::kIomodeAny);

std::string range(uint64_t offset, uint64_t length) {
    return std::to_string(offset) + "+" +
           (length == NFS4_UINT64_MAX ? std::string("all") : std::to_string(length));
}

} // namespace

Compound& Compound::layoutget(const LayoutGetArgs& a) {
    nfs_argop4 op = pnfs_op(NFS4_OP_LAYOUTGET);
    LAYOUTGET4args& g = op.nfs_argop4_u.oplayoutget;
    g.loga_signal_layout_avail = a.signal_layout_avail;
    g.loga_layout_type = static_cast<layouttype4>(a.layout_type);
    g.loga_iomode = static_cast<layoutiomode4>(a.iomode);
    g.loga_offset = a.offset;
    g.loga_length = a.length;
    g.loga_minlength = a.minlength;
    g.loga_stateid = a.stateid;
    g.loga_maxcount = a.maxcount;
    return add(op, "LAYOUTGET type=" + std::to_string(a.layout_type) + " " + iomode_name(a.iomode) +
                       " " + range(a.offset, a.length) + " stateid " + format_stateid(a.stateid));
}

Compound& Compound::getdeviceinfo(const DeviceId4& device, uint32_t layout_type, uint32_t maxcount,
                                  uint32_t notify_types) {
    nfs_argop4 op = pnfs_op(NFS4_OP_GETDEVICEINFO);
    GETDEVICEINFO4args& g = op.nfs_argop4_u.opgetdeviceinfo;
    std::memcpy(g.gdia_device_id, device.data(), NFS4_DEVICEID4_SIZE);
    g.gdia_layout_type = static_cast<layouttype4>(layout_type);
    g.gdia_maxcount = maxcount;
    if (notify_types != 0) {
        g.gdia_notify_types.bitmap4_len = 1;
        g.gdia_notify_types.map[0] = notify_types;
    }
    return add(op,
               "GETDEVICEINFO " + format_deviceid(device) + " type=" + std::to_string(layout_type));
}

Compound& Compound::getdevicelist(uint32_t layout_type, uint32_t maxdevices, uint64_t cookie,
                                  const std::array<char, NFS4_VERIFIER_SIZE>& cookieverf) {
    nfs_argop4 op = pnfs_op(NFS4_OP_GETDEVICELIST);
    GETDEVICELIST4args& g = op.nfs_argop4_u.opgetdevicelist;
    g.gdla_layout_type = static_cast<layouttype4>(layout_type);
    g.gdla_maxdevices = maxdevices;
    g.gdla_cookie = cookie;
    std::memcpy(g.gdla_cookieverf, cookieverf.data(), NFS4_VERIFIER_SIZE);
    return add(op, "GETDEVICELIST type=" + std::to_string(layout_type) +
                       " max=" + std::to_string(maxdevices) + " cookie " + std::to_string(cookie));
}

Compound& Compound::layoutcommit(const LayoutCommitArgs& a) {
    nfs_argop4 op = pnfs_op(NFS4_OP_LAYOUTCOMMIT);
    LAYOUTCOMMIT4args& c = op.nfs_argop4_u.oplayoutcommit;
    c.loca_offset = a.offset;
    c.loca_length = a.length;
    c.loca_reclaim = a.reclaim;
    c.loca_stateid = a.stateid;
    c.loca_last_write_offset.no_newoffset = a.last_write_offset.has_value();
    if (a.last_write_offset) {
        c.loca_last_write_offset.newoffset4_u.no_offset = *a.last_write_offset;
    }
    c.loca_time_modify.nt_timechanged = a.time_modify.has_value();
    if (a.time_modify) {
        c.loca_time_modify.newtime4_u.nt_time = *a.time_modify;
    }
    c.loca_layoutupdate.lou_type = static_cast<layouttype4>(a.layout_type);
    c.loca_layoutupdate.lou_body.lou_body_len = static_cast<u_int>(a.layoutupdate.size());
    c.loca_layoutupdate.lou_body.lou_body_val =
        a.layoutupdate.empty() ? nullptr : keep(a.layoutupdate);
    std::string label =
        "LAYOUTCOMMIT " + range(a.offset, a.length) + " stateid " + format_stateid(a.stateid);
    if (a.last_write_offset) {
        label += " last_write=" + std::to_string(*a.last_write_offset);
    }
    if (a.time_modify) {
        label += " mtime=" + std::to_string(a.time_modify->seconds) + "." +
                 std::to_string(a.time_modify->nseconds);
    }
    return add(op, label);
}

Compound& Compound::layoutreturn(const LayoutReturnArgs& a) {
    nfs_argop4 op = pnfs_op(NFS4_OP_LAYOUTRETURN);
    LAYOUTRETURN4args& r = op.nfs_argop4_u.oplayoutreturn;
    r.lora_reclaim = a.reclaim;
    r.lora_layout_type = static_cast<layouttype4>(a.layout_type);
    r.lora_iomode = static_cast<layoutiomode4>(a.iomode);
    r.lora_layoutreturn.lr_returntype = static_cast<layoutreturn_type4>(a.return_type);
    std::string label = "LAYOUTRETURN " + iomode_name(a.iomode);
    if (a.return_type == LAYOUTRETURN4_FILE) {
        layoutreturn_file4& f = r.lora_layoutreturn.layoutreturn4_u.lr_layout;
        f.lrf_offset = a.offset;
        f.lrf_length = a.length;
        f.lrf_stateid = a.stateid;
        f.lrf_body.lrf_body_len = static_cast<u_int>(a.body.size());
        f.lrf_body.lrf_body_val = a.body.empty() ? nullptr : keep(a.body);
        payload_bytes_ += a.body.size();
        label += " FILE " + range(a.offset, a.length) + " stateid " + format_stateid(a.stateid) +
                 " body=" + std::to_string(a.body.size()) + "B";
    } else {
        label += a.return_type == LAYOUTRETURN4_FSID ? " FSID" : " ALL";
    }
    return add(op, label);
}

Compound& Compound::layouterror(uint64_t offset, uint64_t length, const stateid4& stateid,
                                const std::vector<DeviceError>& errors) {
    const std::vector<char> bytes = encode_layouterror_args(offset, length, stateid, errors);
    std::string label =
        "LAYOUTERROR " + range(offset, length) + " stateid " + format_stateid(stateid);
    for (const DeviceError& e : errors) {
        label += " [" + format_deviceid(e.deviceid).substr(0, 8) + ".. " + status_name(e.status) +
                 " " + op_name(e.opnum) + "]";
    }
    return raw(NFS4_OP_LAYOUTERROR, bytes, label);
}

Compound& Compound::layoutstats(const FlexIoStats& s) {
    const std::vector<char> bytes = encode_layoutstats_args(s);
    return raw(
        NFS4_OP_LAYOUTSTATS, bytes,
        "LAYOUTSTATS " + range(s.offset, s.length) + " stateid " + format_stateid(s.stateid) +
            " device " + format_deviceid(s.deviceid).substr(0, 8) + ".. read " +
            std::to_string(s.read_count) + " ops " + std::to_string(s.read_bytes) + " B, write " +
            std::to_string(s.write_count) + " ops " + std::to_string(s.write_bytes) + " B");
}

// ---- Results. -----------------------------------------------------------------------

const LAYOUTGET4resok& CompoundResult::layoutget(std::size_t i) const {
    return expect(i, NFS4_OP_LAYOUTGET).res.nfs_resop4_u.oplayoutget.LAYOUTGET4res_u.logr_resok4;
}

const GETDEVICEINFO4resok& CompoundResult::getdeviceinfo(std::size_t i) const {
    return expect(i, NFS4_OP_GETDEVICEINFO)
        .res.nfs_resop4_u.opgetdeviceinfo.GETDEVICEINFO4res_u.gdir_resok4;
}

const GETDEVICELIST4resok& CompoundResult::getdevicelist(std::size_t i) const {
    return expect(i, NFS4_OP_GETDEVICELIST)
        .res.nfs_resop4_u.opgetdevicelist.GETDEVICELIST4res_u.gdlr_resok4;
}

std::optional<uint32_t> CompoundResult::getdeviceinfo_mincount(std::size_t i) const {
    if (i >= ops.size()) {
        return std::nullopt;
    }
    const OpResult& r = ops[i];
    if (r.opnum != NFS4_OP_GETDEVICEINFO || r.status != NFS4ERR_TOOSMALL || !r.typed) {
        return std::nullopt;
    }
    return r.res.nfs_resop4_u.opgetdeviceinfo.GETDEVICEINFO4res_u.gdir_mincount;
}

std::optional<uint64_t> CompoundResult::layoutcommit_newsize(std::size_t i) const {
    const newsize4& ns =
        expect(i, NFS4_OP_LAYOUTCOMMIT)
            .res.nfs_resop4_u.oplayoutcommit.LAYOUTCOMMIT4res_u.locr_resok4.locr_newsize;
    if (!ns.ns_sizechanged) {
        return std::nullopt;
    }
    return ns.newsize4_u.ns_size;
}

std::optional<stateid4> CompoundResult::layoutreturn_stateid(std::size_t i) const {
    const ::layoutreturn_stateid& s =
        expect(i, NFS4_OP_LAYOUTRETURN)
            .res.nfs_resop4_u.oplayoutreturn.LAYOUTRETURN4res_u.lorr_stateid;
    if (!s.lrs_present) {
        return std::nullopt;
    }
    return s.layoutreturn_stateid_u.lrs_stateid;
}

} // namespace flexfiles::client
