// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target client_callbacks: a CB_COMPOUND call as the client library's backchannel
// answers it (tools/client/backchannel.hpp): the arguments decoded by Ganesha's routines,
// CB_SEQUENCE checked against a bound session, CB_LAYOUTRECALL matched against a table
// that holds one layout, CB_NOTIFY_DEVICEID's changes decoded (device_notify.hpp).
// The input is the call's arguments.
//
// Invariants: an answer always comes back (no crash, no exception out of the handler); a
// SUCCESS answer carries results that decode as CB_COMPOUND4res with no more results
// than the call had operations.
#include "client/backchannel.hpp"
#include "client/device_notify.hpp"
#include "client/pnfs_client.hpp"
#include "client/xdr_stream.hpp"
#include "fuzz_support.hpp"

extern "C" {
#include "nfs4_device_notify.h" // protocols/: the server's CB_NOTIFY_DEVICEID encoder (seeds)
}

#include <cstring>

using namespace flexfiles::client;

namespace {

constexpr const char* kTarget = "client_callbacks";
const sessionid4 kSession = {'f', 'u', 'z', 'z', 's', 'e', 's', 's',
                             'i', 'o', 'n', '0', '0', '0', '0', '1'};
const FileHandle kFile{std::vector<char>(28, 'F')};

stateid4 layout_stateid() {
    stateid4 s{};
    s.seqid = 1;
    std::memset(s.other, 'L', sizeof(s.other));
    return s;
}

struct Client {
    Backchannel backchannel{kCbProgramDefault};
    LayoutRecallTable layouts;
    std::uint32_t next_seqid = 1;

    Client() {
        backchannel.bind(kSession, 4);
        backchannel.set_handler([this](const nfs_cb_argop4& op, nfs_cb_resop4&) -> nfsstat4 {
            if (enum_bits(op.argop) == NFS4_OP_CB_NOTIFY_DEVICEID) {
                const auto changes =
                    decode_device_notifications(op.nfs_cb_argop4_u.opcbnotify_deviceid);
                if (!changes)
                    return NFS4ERR_BADXDR;
                for (const DeviceNotification& n : *changes)
                    (void)n.describe();
                return NFS4_OK;
            }
            std::vector<FileHandle> recalled;
            return layouts.handle(op, recalled);
        });
    }
};

std::vector<char> cb_compound(std::vector<nfs_cb_argop4>& ops) {
    CB_COMPOUND4args a{};
    a.minorversion = 2;
    a.callback_ident = 1;
    a.argarray.argarray_len = static_cast<u_int>(ops.size());
    a.argarray.argarray_val = ops.data();
    return xdr_encode(4096, "CB_COMPOUND4args",
                      [&](XDR* x) { return xdr_CB_COMPOUND4args(x, &a); });
}

nfs_cb_argop4 sequence_op(std::uint32_t seqid) {
    nfs_cb_argop4 op{};
    op.argop = NFS4_OP_CB_SEQUENCE;
    CB_SEQUENCE4args& s = op.nfs_cb_argop4_u.opcbsequence;
    std::memcpy(s.csa_sessionid, kSession, sizeof(sessionid4));
    s.csa_sequenceid = seqid;
    return op;
}

void seeds(fuzz::SeedWriter& w) {
    {
        std::vector<nfs_cb_argop4> ops{sequence_op(1), {}};
        ops[1].argop = NFS4_OP_CB_LAYOUTRECALL;
        CB_LAYOUTRECALL4args& r = ops[1].nfs_cb_argop4_u.opcblayoutrecall;
        r.clora_type = LAYOUT4_FLEX_FILES;
        r.clora_iomode = LAYOUTIOMODE4_ANY;
        r.clora_changed = true;
        r.clora_recall.lor_recalltype = LAYOUTRECALL4_FILE;
        layoutrecall_file4& f = r.clora_recall.layoutrecall4_u.lor_layout;
        std::vector<char> fh = kFile.bytes;
        f.lor_fh.nfs_fh4_len = static_cast<u_int>(fh.size());
        f.lor_fh.nfs_fh4_val = fh.data();
        f.lor_length = ~0ull;
        f.lor_stateid = layout_stateid();
        f.lor_stateid.seqid = 2;
        w.add("sequence_layoutrecall_file", fuzz::bytes_of(cb_compound(ops)));
        r.clora_recall.lor_recalltype = LAYOUTRECALL4_ALL;
        w.add("sequence_layoutrecall_all", fuzz::bytes_of(cb_compound(ops)));
    }
    {
        char vals[2][NFS4_DEVNOTIFY_VALS_MAX];
        notify4 changes[2];
        deviceid4 id{};
        id[0] = 1;
        id[15] = 2;
        nfs4_devnotify_encode(&changes[0], vals[0], NOTIFY_DEVICEID4_CHANGE, LAYOUT4_FLEX_FILES, id,
                              true);
        nfs4_devnotify_encode(&changes[1], vals[1], NOTIFY_DEVICEID4_DELETE, LAYOUT4_FLEX_FILES, id,
                              false);
        std::vector<nfs_cb_argop4> ops{sequence_op(1), {}};
        ops[1].argop = NFS4_OP_CB_NOTIFY_DEVICEID;
        CB_NOTIFY_DEVICEID4args& n = ops[1].nfs_cb_argop4_u.opcbnotify_deviceid;
        n.cnda_changes.cnda_changes_len = 2;
        n.cnda_changes.cnda_changes_val = changes;
        w.add("sequence_notify_deviceid_change_delete", fuzz::bytes_of(cb_compound(ops)));
    }
    {
        std::vector<nfs_cb_argop4> ops{sequence_op(1), {}};
        ops[1].argop = NFS4_OP_CB_RECALL_ANY;
        ops[1].nfs_cb_argop4_u.opcbrecall_any.craa_objects_to_keep = 0;
        w.add("sequence_recall_any", fuzz::bytes_of(cb_compound(ops)));
    }
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A client per input: the session's slot and the recall table start the same each time.
    Client c;
    auto held = c.layouts.add(kFile);
    c.layouts.set_layout(*held, layout_stateid(), LAYOUTIOMODE4_RW);

    RpcCall call;
    call.xid = 1;
    call.prog = kCbProgramDefault;
    call.vers = kCbVersion;
    call.proc = kCbProcCompound;
    call.args = {reinterpret_cast<const char*>(data), size};
    const std::optional<RpcCallReply> reply = c.backchannel.answer(call);
    FUZZ_CHECK(kTarget, reply.has_value());
    if (reply->accept_stat == SUCCESS) {
        CB_COMPOUND4res res{};
        XdrDecoder d(reply->results);
        FUZZ_CHECK(kTarget, xdr_CB_COMPOUND4res(d.xdr(), &res));
        xdr_free(reinterpret_cast<xdrproc_t>(xdr_CB_COMPOUND4res), &res);
    }
    return 0;
}
