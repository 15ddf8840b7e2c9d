// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target pnfs_argops: the arguments of the operations our patch series adds or
// changes, as Ganesha's COMPOUND decoder sees them (xdr_nfs_argop4 of the patched
// nfsv41.h, which every compound's argarray goes through). The first input byte picks
// the operation; the rest are its arguments:
//   LAYOUT_WCC (77, patch 0003: LAYOUT_WCC4args, the body stays opaque here),
//   LAYOUTERROR (64, 0009: the device_error4 array), LAYOUTSTATS (65, 0011),
//   LAYOUTCOMMIT (49: its layoutupdate4), LAYOUTRETURN (51: its lrf_body),
//   GETDEVICEINFO (47, 0015: the notification types asked for).
//
// Invariants: what decodes encodes, that encoding decodes and encodes to the same bytes
// (the decoders accept only what the encoders write, modulo XDR padding), and freeing
// releases everything (LeakSanitizer).
#include "argop_xdr.h"
#include "client/flex_layout.hpp"
#include "fuzz_support.hpp"
#include "wcc_seeds.hpp"

extern "C" {
#include "config.h"
#include "nfsv41.h"
}

#include <array>
#include <cstring>

namespace {

constexpr const char* kTarget = "pnfs_argops";
constexpr std::array<nfs_opnum4, 6> kOps{static_cast<nfs_opnum4>(77), NFS4_OP_LAYOUTERROR,
                                         NFS4_OP_LAYOUTSTATS,         NFS4_OP_LAYOUTCOMMIT,
                                         NFS4_OP_LAYOUTRETURN,        NFS4_OP_GETDEVICEINFO};

std::vector<char> encode(nfs_argop4& op, std::size_t size) {
    std::vector<char> buf(size);
    std::size_t len = 0;
    FUZZ_CHECK(kTarget, fuzz_argop_encode(&op, buf.data(), buf.size(), &len));
    buf.resize(len);
    return buf;
}

// The arguments without their opcode, as a seed takes them.
fuzz::Bytes args_of(nfs_argop4& op, std::uint8_t selector) {
    std::vector<char> b = encode(op, 1 << 17);
    fuzz::Bytes out{selector};
    out.insert(out.end(), b.begin() + 4, b.end());
    return out;
}

void seeds(fuzz::SeedWriter& w) {
    using fuzz::Bytes;
    // LAYOUT_WCC with each body of the body target.
    for (const auto& [name, body] : fuzz::wccseed::bodies()) {
        Bytes b(4 + 12 + 4, 0); // stateid (seqid + other), lowa_type
        b[3] = 1;
        b[19] = LAYOUT4_FLEX_FILES;
        const std::uint32_t n = static_cast<std::uint32_t>(body.size());
        for (int s = 24; s >= 0; s -= 8)
            b.push_back(static_cast<std::uint8_t>(n >> s));
        b.insert(b.end(), body.begin(), body.end());
        while (b.size() % 4)
            b.push_back(0);
        w.add("layout_wcc_" + name, 0, b, body.size() < 512);
    }
    // LAYOUTERROR and LAYOUTSTATS from the client library's encoders.
    stateid4 sid{};
    sid.seqid = 2;
    std::vector<flexfiles::client::DeviceError> errors(3);
    for (auto& e : errors) {
        e.status = NFS4ERR_NXIO;
        e.opnum = NFS4_OP_WRITE;
    }
    w.add("layouterror_three", 1,
          fuzz::bytes_of(flexfiles::client::encode_layouterror_args(0, ~0ull, sid, errors)));
    flexfiles::client::FlexIoStats st;
    st.read_count = (1ull << 32) + 1;
    st.uaddr = "127.0.0.2.8.1";
    st.fh.bytes = std::vector<char>(28, 'h');
    w.add("layoutstats_flexfiles", 2,
          fuzz::bytes_of(flexfiles::client::encode_layoutstats_args(st)));
    // LAYOUTCOMMIT with a new size and mtime and an (empty, flex-files) update.
    {
        nfs_argop4 op{};
        op.argop = NFS4_OP_LAYOUTCOMMIT;
        LAYOUTCOMMIT4args& c = op.nfs_argop4_u.oplayoutcommit;
        c.loca_length = ~0ull;
        c.loca_stateid = sid;
        c.loca_last_write_offset.no_newoffset = true;
        c.loca_last_write_offset.newoffset4_u.no_offset = 1 << 20;
        c.loca_time_modify.nt_timechanged = true;
        c.loca_time_modify.newtime4_u.nt_time.seconds = 1'800'000'000;
        c.loca_layoutupdate.lou_type = LAYOUT4_FLEX_FILES;
        w.add("layoutcommit_size_mtime", args_of(op, 3));
    }
    // LAYOUTRETURN of a file with the client's ff_layoutreturn4 body.
    {
        flexfiles::client::FlexLayoutReturn r;
        r.ioerr_report.emplace_back();
        r.ioerr_report[0].errors = errors;
        std::vector<char> body = flexfiles::client::encode_ff_layoutreturn4(r);
        nfs_argop4 op{};
        op.argop = NFS4_OP_LAYOUTRETURN;
        LAYOUTRETURN4args& a = op.nfs_argop4_u.oplayoutreturn;
        a.lora_layout_type = LAYOUT4_FLEX_FILES;
        a.lora_iomode = LAYOUTIOMODE4_RW;
        a.lora_layoutreturn.lr_returntype = LAYOUTRETURN4_FILE;
        layoutreturn_file4& f = a.lora_layoutreturn.layoutreturn4_u.lr_layout;
        f.lrf_length = ~0ull;
        f.lrf_stateid = sid;
        f.lrf_body.lrf_body_len = static_cast<u_int>(body.size());
        f.lrf_body.lrf_body_val = body.data();
        w.add("layoutreturn_file_body", args_of(op, 4));
    }
    // GETDEVICEINFO asking for CHANGE and DELETE notifications.
    {
        nfs_argop4 op{};
        op.argop = NFS4_OP_GETDEVICEINFO;
        GETDEVICEINFO4args& g = op.nfs_argop4_u.opgetdeviceinfo;
        const auto id = flexfiles::fleet::make_deviceid(1);
        std::memcpy(g.gdia_device_id, id.data(), id.size());
        g.gdia_layout_type = LAYOUT4_FLEX_FILES;
        g.gdia_maxcount = 1 << 16;
        std::uint32_t notify = 1u << NOTIFY_DEVICEID4_CHANGE | 1u << NOTIFY_DEVICEID4_DELETE;
        g.gdia_notify_types.bitmap4_len = 1;
        g.gdia_notify_types.map[0] = notify;
        w.add("getdeviceinfo_notify", args_of(op, 5));
    }
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    const nfs_opnum4 opnum = kOps[in.u8() % kOps.size()];
    const auto args = in.rest();
    std::vector<char> wire(4 + args.size());
    const std::uint32_t be = htonl(static_cast<std::uint32_t>(opnum));
    std::memcpy(wire.data(), &be, 4);
    if (!args.empty())
        std::memcpy(wire.data() + 4, args.data(), args.size());

    nfs_argop4 op;
    const bool ok = fuzz_argop_decode(wire.data(), wire.size(), &op);
    if (ok) {
        FUZZ_CHECK(kTarget, fuzz_argop_opnum(&op) == static_cast<std::uint32_t>(opnum));
        const std::vector<char> first = encode(op, 2 * wire.size() + 1024);
        nfs_argop4 again;
        FUZZ_CHECK(kTarget, fuzz_argop_decode(first.data(), first.size(), &again));
        const std::vector<char> second = encode(again, 2 * wire.size() + 1024);
        FUZZ_CHECK(kTarget, first == second);
        fuzz_argop_free(&again);
    }
    fuzz_argop_free(&op);
    return 0;
}
