// SPDX-License-Identifier: LGPL-3.0-or-later
// RpcTransport and Backchannel against a fake peer over real TCP (no Ganesha): CB_NULL,
// program/version/procedure errors, CB_SEQUENCE checks, the callback hook, fragmented
// replies interleaved with callbacks, RPC errors, hang-ups and oversized records.
#include "client/backchannel.hpp"
#include "client/nfs4_names.hpp"
#include "client/rpc_transport.hpp"
#include "cmocka_cpp.hpp"
#include "fake_peer.hpp"

#include <memory>

using namespace flexfiles::client;
using namespace fake_peer;

namespace {

sessionid4 kSession = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

std::vector<char> cb_compound(uint32_t seqid, bool with_recall, const sessionid4& s = kSession) {
    nfs_cb_argop4 ops[2];
    std::memset(ops, 0, sizeof ops);
    ops[0].argop = NFS4_OP_CB_SEQUENCE;
    CB_SEQUENCE4args& sa = ops[0].nfs_cb_argop4_u.opcbsequence;
    std::memcpy(sa.csa_sessionid, s, sizeof(sessionid4));
    sa.csa_sequenceid = seqid;
    sa.csa_slotid = 0;
    ops[1].argop = NFS4_OP_CB_LAYOUTRECALL;
    CB_LAYOUTRECALL4args& lr = ops[1].nfs_cb_argop4_u.opcblayoutrecall;
    lr.clora_type = LAYOUT4_FLEX_FILES;
    lr.clora_iomode = LAYOUTIOMODE4_ANY;
    lr.clora_changed = true;
    lr.clora_recall.lor_recalltype = LAYOUTRECALL4_ALL;
    CB_COMPOUND4args a;
    std::memset(&a, 0, sizeof a);
    a.minorversion = 2;
    a.argarray.argarray_len = with_recall ? 2 : 1;
    a.argarray.argarray_val = ops;
    return xdr_encode(512, "cb", [&](XDR* x) { return xdr_CB_COMPOUND4args(x, &a); });
}

struct CbResult {
    uint32_t status = NFS4ERR_IO;
    std::vector<std::pair<uint32_t, uint32_t>> ops; // (op, status)
    uint32_t seq = 0;
};

CbResult decode_cb(const std::vector<char>& body) {
    CbResult out;
    CB_COMPOUND4res r;
    std::memset(&r, 0, sizeof r);
    XdrDecoder d(body);
    if (!xdr_CB_COMPOUND4res(d.xdr(), &r)) {
        return out;
    }
    out.status = r.status;
    for (u_int i = 0; i < r.resarray.resarray_len; ++i) {
        uint32_t st;
        std::memcpy(&st, &r.resarray.resarray_val[i].nfs_cb_resop4_u, sizeof st);
        out.ops.push_back({r.resarray.resarray_val[i].resop, st});
        if (r.resarray.resarray_val[i].resop == NFS4_OP_CB_SEQUENCE && st == NFS4_OK) {
            out.seq = r.resarray.resarray_val[i]
                          .nfs_cb_resop4_u.opcbsequence.CB_SEQUENCE4res_u.csr_resok4.csr_sequenceid;
        }
    }
    xdr_nfree(reinterpret_cast<xdrproc_t>(xdr_CB_COMPOUND4res), &r);
    return out;
}

struct Peer {
    Listener listener;
    std::unique_ptr<RpcTransport> transport;
    int fd = -1;
    Peer() {
        transport = RpcTransport::connect("127.0.0.1", listener.port, std::chrono::seconds(2));
        fd = listener.accept_one();
    }
    ~Peer() {
        transport.reset();
        if (fd >= 0) {
            ::close(fd);
        }
    }
    Reply call(const std::vector<char>& msg) {
        send_fragment(fd, msg);
        return parse_reply(read_record(fd));
    }
};

void test_backchannel_calls(void**) {
    Peer p;
    Backchannel bc(kCbProgramDefault);
    bc.bind(kSession, 2);
    p.transport->set_call_handler([&](const RpcCall& c) { return bc.answer(c); });

    // CB_NULL, wrong program, wrong version, unknown procedure.
    Reply r = p.call(call_msg(11, kCbProgramDefault, 1, 0, {}));
    assert_true(r.xid == 11 && r.accept == 0 && r.body.empty());
    r = p.call(call_msg(12, 12345, 1, 0, {}));
    assert_true(r.xid == 12 && r.accept == 1);
    r = p.call(call_msg(13, kCbProgramDefault, 4, 1, {}));
    assert_true(r.xid == 13 && r.accept == 2 && r.body.size() == 8);
    r = p.call(call_msg(14, kCbProgramDefault, 1, 7, {}));
    assert_true(r.xid == 14 && r.accept == 3);

    // CB_SEQUENCE + CB_LAYOUTRECALL without a handler: NOMATCHING_LAYOUT.
    r = p.call(call_msg(20, kCbProgramDefault, 1, 1, cb_compound(1, true)));
    assert_true(r.xid == 20 && r.accept == 0);
    CbResult cb = decode_cb(r.body);
    assert_int_equal(cb.status, NFS4ERR_NOMATCHING_LAYOUT);
    assert_int_equal(cb.ops.size(), 2);
    assert_int_equal(cb.seq, 1);
    assert_int_equal(cb.ops[0].second, NFS4_OK);
    assert_int_equal(cb.ops[1].first, NFS4_OP_CB_LAYOUTRECALL);
    // The same sequence id again: no reply cache.
    cb = decode_cb(p.call(call_msg(21, kCbProgramDefault, 1, 1, cb_compound(1, true))).body);
    assert_int_equal(cb.status, NFS4ERR_RETRY_UNCACHED_REP);
    assert_int_equal(cb.ops.size(), 1);
    // Skipping ahead: misordered.
    cb = decode_cb(p.call(call_msg(22, kCbProgramDefault, 1, 1, cb_compound(5, false))).body);
    assert_int_equal(cb.status, NFS4ERR_SEQ_MISORDERED);
    // Another session.
    sessionid4 other = {9};
    cb =
        decode_cb(p.call(call_msg(23, kCbProgramDefault, 1, 1, cb_compound(2, false, other))).body);
    assert_int_equal(cb.status, NFS4ERR_BADSESSION);
    // The hook accepts the recall.
    int recalls = 0;
    bc.set_handler([&](const nfs_cb_argop4& op, nfs_cb_resop4&) {
        if (op.argop == NFS4_OP_CB_LAYOUTRECALL) {
            recalls++;
            return NFS4_OK;
        }
        return NFS4ERR_NOTSUPP;
    });
    cb = decode_cb(p.call(call_msg(24, kCbProgramDefault, 1, 1, cb_compound(2, true))).body);
    assert_int_equal(cb.status, NFS4_OK);
    assert_int_equal(cb.ops.size(), 2);
    assert_int_equal(recalls, 1);
    assert_int_equal(cb.seq, 2);
    // Garbage arguments.
    r = p.call(call_msg(25, kCbProgramDefault, 1, 1, {0, 0, 0, 9}));
    assert_true(r.xid == 25 && r.accept == 4);
    assert_int_equal(bc.answered(), 6); // CB_NULL + 5 decoded CB_COMPOUNDs
}

void test_fore_channel(void**) {
    Peer p;
    Backchannel bc(kCbProgramDefault);
    bc.bind(kSession, 2);
    p.transport->set_call_handler([&](const RpcCall& c) { return bc.answer(c); });

    // A call whose reply arrives in two fragments, after a callback.
    const std::vector<char> args = {0, 0, 0, 1};
    auto fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(3));
    Call req = parse_call(read_record(p.fd));
    assert_true(req.ok);
    assert_int_equal(req.prog, 100003);
    send_fragment(p.fd, call_msg(30, kCbProgramDefault, 1, 0, {})); // CB_NULL first
    std::vector<char> rep = reply_msg(req.xid, {char(0xab), char(0xcd), char(0xef), 1});
    send_fragment(p.fd, std::vector<char>(rep.begin(), rep.begin() + 10), false);
    send_fragment(p.fd, std::vector<char>(rep.begin() + 10, rep.end()), true);
    RpcReply fr = fut.get();
    assert_true(fr.ok());
    assert_int_equal(fr.body().size(), 4);
    Reply cbr = parse_reply(read_record(p.fd));
    assert_true(cbr.xid == 30 && cbr.accept == 0);

    // A reply nobody waits for is dropped and counted.
    rep[0] ^= 0x55;
    send_fragment(p.fd, rep);
    // AUTH_ERROR.
    fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(3));
    req = parse_call(read_record(p.fd));
    send_fragment(p.fd, xdr_encode(64, "r", [&](XDR* x) {
                      return xdr_put_u32(x, req.xid) && xdr_put_u32(x, 1) && xdr_put_u32(x, 1) &&
                             xdr_put_u32(x, 1) && xdr_put_u32(x, 5);
                  }));
    fr = fut.get();
    assert_true(fr.status == RpcStatus::auth_error);
    assert_int_equal(p.transport->stray_replies(), 1);
    // PROG_UNAVAIL.
    fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(3));
    req = parse_call(read_record(p.fd));
    send_fragment(p.fd, reply_msg(req.xid, {}, 1));
    assert_true(fut.get().status == RpcStatus::prog_unavail);

    // Hang-up with a call pending: it fails at once, later calls too.
    fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(30));
    read_record(p.fd);
    const auto t0 = Clock::now();
    ::close(p.fd);
    p.fd = -1;
    fr = fut.get();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    assert_true(fr.status == RpcStatus::connection_lost);
    assert_true(secs < 0.5);
    fr = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(1)).get();
    assert_true(fr.status == RpcStatus::connection_lost);
}

void test_rpc_header_errors(void**) {
    Peer p;
    Backchannel bc(kCbProgramDefault);
    bc.bind(kSession, 2);
    p.transport->set_call_handler([&](const RpcCall& c) { return bc.answer(c); });

    // A CALL of RPC version 3: denied, RPC_MISMATCH, versions 2..2.
    std::vector<char> v3call = call_msg(40, kCbProgramDefault, 1, 0, {});
    v3call[11] = 3;
    send_fragment(p.fd, v3call);
    const std::vector<char> denied = read_record(p.fd);
    XdrDecoder d(denied);
    uint32_t xid = 0, mtype = 0, rstat = 0, rj = 9, low = 0, high = 0;
    assert_true(d.u32(xid) && d.u32(mtype) && d.u32(rstat) && d.u32(rj) && d.u32(low) &&
                d.u32(high));
    assert_true(xid == 40 && mtype == 1 && rstat == 1 && rj == 0 && low == 2 && high == 2);
    assert_int_equal(d.remaining(), 0);
    // A truncated CALL header is not answered; the next call still is.
    v3call[11] = 2;
    send_fragment(p.fd, std::vector<char>(v3call.begin(), v3call.begin() + 20));
    Reply r = p.call(v3call);
    assert_true(r.xid == 40 && r.accept == 0);

    // PROG_MISMATCH with the server's range; a reply header cut short.
    const std::vector<char> args = {0, 0, 0, 1};
    auto fut = p.transport->call(100003, 5, 1, AuthSys{}, args, std::chrono::seconds(3));
    Call req = parse_call(read_record(p.fd));
    send_fragment(p.fd, xdr_encode(64, "r", [&](XDR* x) {
                      return xdr_put_u32(x, req.xid) && xdr_put_u32(x, 1) && xdr_put_u32(x, 0) &&
                             xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 2) &&
                             xdr_put_u32(x, 3) && xdr_put_u32(x, 4);
                  }));
    RpcReply fr = fut.get();
    assert_true(fr.status == RpcStatus::prog_mismatch);
    assert_true(fr.detail.find("3..4") != std::string::npos);
    fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(3));
    req = parse_call(read_record(p.fd));
    std::vector<char> cut = reply_msg(req.xid, {});
    cut.resize(16); // xid, REPLY, MSG_ACCEPTED, verifier flavor: no length, no accept_stat
    send_fragment(p.fd, cut);
    fr = fut.get();
    assert_true(fr.status == RpcStatus::bad_reply);
}

void test_timeout(void**) {
    Peer p;
    const std::vector<char> args = {0, 0, 0, 1};
    const auto t0 = Clock::now();
    RpcReply r =
        p.transport->call(100003, 3, 0, AuthSys{}, args, std::chrono::milliseconds(300)).get();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    assert_true(r.status == RpcStatus::timed_out);
    assert_true(secs >= 0.29 && secs < 1.5);
}

void test_oversized_record(void**) {
    Peer p;
    const std::vector<char> args = {0, 0, 0, 1};
    auto fut = p.transport->call(100003, 4, 1, AuthSys{}, args, std::chrono::seconds(30));
    read_record(p.fd);
    const uint32_t huge = htonl(0x80000000u | 0x7ffffff0u);
    write_all(p.fd, &huge, 4);
    RpcReply fr = fut.get();
    assert_true(fr.status == RpcStatus::connection_lost);
    assert_true(fr.detail.find("exceeds") != std::string::npos);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backchannel_calls), cmocka_unit_test(test_fore_channel),
        cmocka_unit_test(test_timeout),           cmocka_unit_test(test_oversized_record),
        cmocka_unit_test(test_rpc_header_errors),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
