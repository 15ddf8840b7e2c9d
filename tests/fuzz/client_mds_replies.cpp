// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target client_mds_replies: what the client library (tools/client) decodes from a
// metadata server, chosen by the first input byte:
//   0  a whole COMPOUND4res (decode_compound_reply), then every typed result a caller
//      may ask of it: GETATTR's fattr4, LAYOUTGET's ff_layout4, GETDEVICEINFO's
//      ff_device_addr4, LAYOUTCOMMIT's new size, LAYOUTRETURN's stateid, ...
//   1  an ff_layout4 body (decode_ff_layout4)
//   2  an ff_device_addr4 body (decode_ff_device_addr4) and the addresses in it
// A misbehaving server gets an XdrError or NfsError from the library, never a crash.
#include "client/attrs.hpp"
#include "client/compound.hpp"
#include "client/flex_layout.hpp"
#include "fuzz_support.hpp"
#include "pnfs/xdr/ff_xdr.hpp"
#include "wcc_seeds.hpp"

#include <cstring>
#include <exception>

namespace client = flexfiles::client;

namespace {

constexpr const char* kTarget = "client_mds_replies";

template <typename F> void tolerate(F&& f) {
    try {
        f();
    } catch (const std::exception&) {
        // XdrError, NfsError, ...: the library refused the reply, as it should.
    }
}

void compound_reply(std::span<const std::uint8_t> bytes) {
    std::vector<char> record(bytes.begin(), bytes.end());
    client::CompoundResult r = client::decode_compound_reply(std::move(record), 0);
    for (std::size_t i = 0; i < r.ops.size(); ++i) {
        tolerate([&] { (void)r.raw_result(i); });
        switch (r.ops[i].opnum) {
        case NFS4_OP_GETATTR:
            tolerate([&] { (void)client::format_attrs(r.attrs(i)); });
            break;
        case NFS4_OP_GETFH:
            tolerate([&] { (void)r.fh(i); });
            break;
        case NFS4_OP_LAYOUTGET:
            tolerate([&] { (void)client::decode_layoutget(r.layoutget(i)).describe(); });
            break;
        case NFS4_OP_GETDEVICEINFO:
            tolerate([&] { (void)client::decode_getdeviceinfo(r.getdeviceinfo(i)).describe(); });
            tolerate([&] { (void)r.getdeviceinfo_mincount(i); });
            break;
        case NFS4_OP_LAYOUTCOMMIT:
            tolerate([&] { (void)r.layoutcommit_newsize(i); });
            break;
        case NFS4_OP_LAYOUTRETURN:
            tolerate([&] { (void)r.layoutreturn_stateid(i); });
            break;
        case NFS4_OP_SEQUENCE:
            tolerate([&] { (void)r.sequence_ok(); });
            break;
        default:
            tolerate([&] { (void)r.stateid(i); });
        }
    }
    (void)r.describe();
}

void layout_body(std::span<const std::uint8_t> bytes) {
    tolerate([&] {
        const client::FlexLayout l =
            client::decode_ff_layout4({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
        FUZZ_CHECK(kTarget, !l.describe().empty());
    });
}

void device_body(std::span<const std::uint8_t> bytes) {
    tolerate([&] {
        const client::FlexDeviceAddr d = client::decode_ff_device_addr4(
            {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
        for (const client::FlexNetAddr& a : d.netaddrs)
            if (a.address) // what parsed formats back to an address that parses the same
                FUZZ_CHECK(kTarget,
                           client::parse_universal_address(
                               a.netid, client::format_universal_address(
                                            a.address->host, a.address->port)) == a.address);
        (void)d.describe();
        tolerate([&] { (void)d.tcp_address(); });
    });
}

// A COMPOUND4res as Ganesha's encoder writes it: SEQUENCE, PUTFH, GETATTR with the
// client's own fattr4 encoding, LAYOUTGET with the FSAL's ff_layout4, GETDEVICEINFO with
// its ff_device_addr4.
fuzz::Bytes compound_seed(const std::vector<char>& layout, const std::vector<char>& device) {
    client::Fattr attrs;
    attrs.type = NF4REG;
    attrs.size = 1 << 20;
    attrs.owner = "1000@example.org";
    attrs.time_modify = client::NfsTime{1'800'000'000, 5};
    const client::EncodedFattr enc = client::encode_fattr4(attrs);

    std::vector<nfs_resop4> res(5);
    res[0].resop = NFS4_OP_SEQUENCE;
    res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_highest_slotid = 15;
    res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_target_highest_slotid = 15;
    res[1].resop = NFS4_OP_PUTFH;
    res[2].resop = NFS4_OP_GETATTR;
    res[2].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes = enc.view();
    res[3].resop = NFS4_OP_LAYOUTGET;
    LAYOUTGET4resok& lg = res[3].nfs_resop4_u.oplayoutget.LAYOUTGET4res_u.logr_resok4;
    layout4 seg{};
    seg.lo_length = ~0ull;
    seg.lo_iomode = LAYOUTIOMODE4_RW;
    seg.lo_content.loc_type = LAYOUT4_FLEX_FILES;
    seg.lo_content.loc_body.loc_body_len = static_cast<u_int>(layout.size());
    seg.lo_content.loc_body.loc_body_val = const_cast<char*>(layout.data());
    lg.logr_return_on_close = true;
    lg.logr_stateid.seqid = 1;
    lg.logr_layout.logr_layout_len = 1;
    lg.logr_layout.logr_layout_val = &seg;
    res[4].resop = NFS4_OP_GETDEVICEINFO;
    GETDEVICEINFO4resok& gd = res[4].nfs_resop4_u.opgetdeviceinfo.GETDEVICEINFO4res_u.gdir_resok4;
    gd.gdir_device_addr.da_layout_type = LAYOUT4_FLEX_FILES;
    gd.gdir_device_addr.da_addr_body.da_addr_body_len = static_cast<u_int>(device.size());
    gd.gdir_device_addr.da_addr_body.da_addr_body_val = const_cast<char*>(device.data());

    COMPOUND4res c{};
    c.status = NFS4_OK;
    c.resarray.resarray_len = static_cast<u_int>(res.size());
    c.resarray.resarray_val = res.data();
    std::vector<char> buf(1 << 16);
    XDR x;
    xdrmem_create(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
    FUZZ_CHECK(kTarget, xdr_COMPOUND4res(&x, &c));
    buf.resize(xdr_getpos(&x));
    xdr_destroy(&x);
    return fuzz::bytes_of(buf);
}

std::vector<char> encoded(const std::function<bool(XDR*)>& fill) {
    std::vector<char> buf(1 << 16);
    XDR x;
    xdrmem_create(&x, buf.data(), static_cast<u_int>(buf.size()), XDR_ENCODE);
    FUZZ_CHECK(kTarget, fill(&x));
    buf.resize(xdr_getpos(&x));
    xdr_destroy(&x);
    return buf;
}

void seeds(fuzz::SeedWriter& w) {
    using namespace flexfiles::layout;
    const std::vector<char> layout =
        encoded([](XDR* x) { return encode_layout(x, layout_of(fuzz::fixed_file(), {}, 0, 4)); });
    DeviceAddr dev;
    dev.addrs = {*universal_address("127.0.0.3", 2049), *universal_address("::1", 20049)};
    dev.versions = {DeviceVersion{3, 0, 1 << 20, 1 << 20, false}};
    const std::vector<char> device = encoded([&](XDR* x) { return encode_device_addr(x, dev); });
    w.add("compound_sequence_getattr_layoutget_getdeviceinfo", 0, compound_seed(layout, device));
    w.add("ff_layout4", 1, fuzz::bytes_of(layout));
    w.add("ff_device_addr4", 2, fuzz::bytes_of(device));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    switch (in.u8() % 3) {
    case 0:
        compound_reply(in.rest());
        break;
    case 1:
        layout_body(in.rest());
        break;
    default:
        device_body(in.rest());
        break;
    }
    return 0;
}
