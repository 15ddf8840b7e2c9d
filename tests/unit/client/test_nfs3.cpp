// SPDX-License-Identifier: LGPL-3.0-or-later
// The NFSv3 data-server client (client/nfs3.hpp): every message encoded and decoded both
// ways, hostile replies, and the client against a fake data server over TCP (AUTH_SYS
// identity per call, post-op attributes kept, NFS3ERR_ACCES as data, MOUNT).
#include "client/nfs3.hpp"
#include "cmocka_cpp.hpp"
#include "fake_peer.hpp"

#include <atomic>
#include <thread>

using namespace flexfiles::client;
using namespace fake_peer;
namespace v3 = flexfiles::client::nfs3;

namespace {

v3::Fattr attrs(uint64_t size) {
    v3::Fattr a;
    a.type = v3::Ftype::reg;
    a.mode = 0644;
    a.nlink = 1;
    a.uid = 1000001;
    a.gid = 1000002;
    a.size = size;
    a.used = (size + 4095) / 4096 * 4096;
    a.rdev_major = 0;
    a.rdev_minor = 0;
    a.fsid = 0x1122334455667788ull;
    a.fileid = 42;
    a.atime = {1700000000, 1};
    a.mtime = {1700000001, 2};
    a.ctime = {1700000002, 3};
    return a;
}

const FileHandle kFh{{1, 2, 3, 4, 5, 6, 7}}; // 7 bytes: one byte of padding

void test_args_round_trip(void**) {
    const v3::GetattrArgs g{kFh};
    assert_true(v3::decode_getattr_args(v3::encode(g)) == g);
    assert_int_equal(v3::encode(g).size(), 4 + 8); // length + 7 bytes + 1 pad
    const v3::ReadArgs r{kFh, 1ull << 40, 65536};
    assert_true(v3::decode_read_args(v3::encode(r)) == r);
    v3::WriteArgs w{kFh, 12345, v3::Stable::data_sync, {'a', 'b', 'c', 'd', 'e'}};
    const std::vector<char> we = v3::encode(w);
    assert_int_equal(we.size(), 12 + 8 + 4 + 4 + 4 + 8); // fh, offset, count, stable, data
    assert_true(v3::decode_write_args(we) == w);
    const v3::CommitArgs c{kFh, 0, 0};
    assert_true(v3::decode_commit_args(v3::encode(c)) == c);
    assert_string_equal(v3::decode_mnt_args(v3::encode_mnt_args("/srv/ds1")).c_str(), "/srv/ds1");

    // A WRITE whose count disagrees with its data is refused.
    std::vector<char> bad = we;
    bad[12 + 8 + 3] = 4; // count 4, data 5 bytes
    bool threw = false;
    try {
        v3::decode_write_args(bad);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
    // A filehandle over 64 bytes cannot be encoded.
    threw = false;
    try {
        v3::encode(v3::GetattrArgs{FileHandle{std::vector<char>(65, 'x')}});
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
}

template <typename R> R round_trip(const R& r) {
    R back;
    v3::decode(v3::encode(r), back);
    return back;
}

void test_results_round_trip(void**) {
    v3::GetattrResult g;
    g.status = v3::Status::ok;
    g.attrs = attrs(100);
    assert_true(round_trip(g) == g);
    assert_int_equal(v3::encode(g).size(), 4 + 84); // status + fattr3
    v3::GetattrResult gs;
    gs.status = v3::Status::stale;
    assert_true(round_trip(gs) == gs);

    v3::ReadResult r;
    r.status = v3::Status::ok;
    r.attrs = attrs(5);
    r.count = 5;
    r.eof = true;
    r.data = {'h', 'e', 'l', 'l', 'o'};
    assert_true(round_trip(r) == r);
    v3::ReadResult rf;
    rf.status = v3::Status::acces;
    rf.attrs = attrs(5); // READ3resfail keeps post-op attributes
    assert_true(round_trip(rf) == rf);

    v3::WriteResult w;
    w.status = v3::Status::ok;
    w.wcc.before = v3::WccAttr{0, {1, 2}, {3, 4}};
    w.wcc.after = attrs(4096);
    w.count = 4096;
    w.committed = v3::Stable::file_sync;
    w.verf = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_true(round_trip(w) == w);
    v3::WriteResult wf; // NFS3ERR_ACCES after fencing: no attributes at all
    wf.status = v3::Status::acces;
    const v3::WriteResult wfb = round_trip(wf);
    assert_true(wfb == wf);
    assert_false(wfb.wcc.after.has_value());
    assert_int_equal(v3::encode(wf).size(), 12);

    v3::CommitResult c;
    c.status = v3::Status::ok;
    c.wcc.after = attrs(4096);
    c.verf = {8, 7, 6, 5, 4, 3, 2, 1};
    assert_true(round_trip(c) == c);

    v3::MountResult m;
    m.status = 0;
    m.fh = kFh;
    m.auth_flavors = {1, 0};
    assert_true(v3::decode_mount_result(v3::encode(m)) == m);
    v3::MountResult mf;
    mf.status = 13;
    assert_true(v3::decode_mount_result(v3::encode(mf)) == mf);
}

void test_hostile_replies(void**) {
    v3::WriteResult w;
    w.status = v3::Status::ok;
    w.wcc.after = attrs(4096);
    w.count = 1;
    const std::vector<char> bytes = v3::encode(w);
    // Every truncation throws; so do trailing bytes.
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        bool threw = false;
        try {
            v3::WriteResult out;
            v3::decode(std::span<const char>(bytes.data(), cut), out);
        } catch (const XdrError&) {
            threw = true;
        }
        assert_true(threw);
    }
    std::vector<char> longer = bytes;
    longer.push_back(0);
    longer.push_back(0);
    longer.push_back(0);
    longer.push_back(0);
    bool threw = false;
    try {
        v3::WriteResult out;
        v3::decode(longer, out);
    } catch (const XdrError& e) {
        threw = std::string(e.what()).find("follow") != std::string::npos;
    }
    assert_true(threw);
    // A bool that is 2 (attributes_follow).
    std::vector<char> two = bytes;
    two[7] = 2;
    threw = false;
    try {
        v3::WriteResult out;
        v3::decode(two, out);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
    // A READ reply claiming 16 MiB of data in 40 bytes: refused without allocating it all.
    const std::vector<char> huge = xdr_encode(64, "READ3res", [](XDR* x) {
        return xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 16u << 20) &&
               xdr_put_u32(x, 0) && xdr_put_u32(x, 16u << 20) && xdr_put_u32(x, 7);
    });
    threw = false;
    try {
        v3::ReadResult out;
        v3::decode(huge, out);
    } catch (const XdrError&) {
        threw = true;
    }
    assert_true(threw);
    // Unknown status values are kept as they are.
    const std::vector<char> odd =
        xdr_encode(16, "GETATTR3res", [](XDR* x) { return xdr_put_u32(x, 12345); });
    v3::GetattrResult out;
    v3::decode(odd, out);
    assert_int_equal(static_cast<uint32_t>(out.status), 12345);
    assert_string_equal(v3::status_name(out.status).c_str(), "NFS3ERR_12345");
}

// Lengths off the wire are bounded by what arrived (READ and WRITE data, unbounded in
// nfs23.x) or by the client's limits (MOUNT's auth flavors, filehandles).
void test_bounded_decoding(void**) {
    const auto throws = [](auto&& fn) {
        try {
            fn();
        } catch (const XdrError&) {
            return true;
        }
        return false;
    };
    // A READ reply and a WRITE call claiming almost 4 GiB of data in a few bytes.
    const std::vector<char> read = xdr_encode(64, "READ3res", [](XDR* x) {
        return xdr_put_u32(x, 0) && xdr_put_u32(x, 0) && xdr_put_u32(x, 16) && xdr_put_u32(x, 1) &&
               xdr_put_u32(x, 0xfffffff0u) && xdr_put_u32(x, 7);
    });
    assert_true(throws([&] {
        v3::ReadResult out;
        v3::decode(read, out);
    }));
    const std::vector<char> write = xdr_encode(64, "WRITE3args", [](XDR* x) {
        return xdr_put_u32(x, 0) && xdr_put_u64(x, 0) && xdr_put_u32(x, 16) && xdr_put_u32(x, 0) &&
               xdr_put_u32(x, 0xfffffff0u) && xdr_put_u32(x, 7);
    });
    assert_true(throws([&] { v3::decode_write_args(write); }));
    // READ data over 16 MiB is refused even when it all arrived.
    v3::ReadResult big;
    big.status = v3::Status::ok;
    big.count = v3::kMaxData + 4;
    big.data.assign(v3::kMaxData + 4, 'b');
    assert_true(throws([&] { v3::encode(big); }));
    // MOUNT: 64 auth flavors decode, 65 do not; a 65-byte filehandle does not.
    v3::MountResult m;
    m.fh = kFh;
    m.auth_flavors.assign(64, 1);
    assert_true(v3::decode_mount_result(v3::encode(m)) == m);
    const std::vector<char> many = xdr_encode(512, "mountres3", [](XDR* x) {
        bool ok =
            xdr_put_u32(x, 0) && xdr_put_opaque(x, std::vector<char>(4, 'f')) && xdr_put_u32(x, 65);
        for (int i = 0; i < 65 && ok; ++i) {
            ok = xdr_put_u32(x, 1);
        }
        return ok;
    });
    assert_true(throws([&] { v3::decode_mount_result(many); }));
    const std::vector<char> long_fh = xdr_encode(512, "mountres3", [](XDR* x) {
        return xdr_put_u32(x, 0) && xdr_put_opaque(x, std::vector<char>(65, 'f')) &&
               xdr_put_u32(x, 0);
    });
    assert_true(throws([&] { v3::decode_mount_result(long_fh); }));
}

void test_status_mapping(void**) {
    assert_string_equal(v3::status_name(v3::Status::acces).c_str(), "NFS3ERR_ACCES");
    assert_int_equal(v3::to_nfs4_status(v3::Status::ok), NFS4_OK);
    assert_int_equal(v3::to_nfs4_status(v3::Status::acces), NFS4ERR_ACCESS);
    assert_int_equal(v3::to_nfs4_status(v3::Status::stale), NFS4ERR_STALE);
    assert_int_equal(v3::to_nfs4_status(v3::Status::nospc), NFS4ERR_NOSPC);
    assert_int_equal(v3::to_nfs4_status(v3::Status::jukebox), NFS4ERR_DELAY);
    assert_int_equal(v3::to_nfs4_status(v3::Status::badhandle), NFS4ERR_BADHANDLE);
    assert_int_equal(v3::to_nfs4_status(static_cast<v3::Status>(10999)), NFS4ERR_IO);
}

// A fake NFSv3 data server: answers GETATTR, READ, WRITE, COMMIT on one connection.
// uid 666 is fenced: its WRITEs get NFS3ERR_ACCES with no attributes.
struct FakeDataServer {
    Listener listener;
    std::thread thread;
    std::atomic<uint32_t> last_uid{0}, last_gid{0};
    std::atomic<int> calls{0};

    FakeDataServer() {
        thread = std::thread([this] { serve(); });
    }
    ~FakeDataServer() { thread.join(); }

    void serve() {
        const int fd = listener.accept_one();
        uint64_t size = 0;
        for (;;) {
            const std::vector<char> rec = read_record(fd);
            if (rec.empty()) {
                break;
            }
            const Call c = parse_call(rec);
            calls++;
            last_uid = c.uid;
            last_gid = c.gid;
            std::vector<char> res;
            uint32_t accept = 0;
            if (c.prog != v3::kProgram || c.vers != v3::kVersion) {
                accept = 1;
            } else if (c.proc == v3::kProcNull) {
            } else if (c.proc == v3::kProcGetattr) {
                v3::GetattrResult r;
                r.status =
                    v3::decode_getattr_args(c.args).fh == kFh ? v3::Status::ok : v3::Status::stale;
                if (r.status == v3::Status::ok) {
                    r.attrs = attrs(size);
                }
                res = v3::encode(r);
            } else if (c.proc == v3::kProcWrite) {
                const v3::WriteArgs a = v3::decode_write_args(c.args);
                v3::WriteResult r;
                if (c.uid == 666) {
                    r.status = v3::Status::acces;
                } else {
                    size = std::max<uint64_t>(size, a.offset + a.data.size());
                    r.status = v3::Status::ok;
                    r.wcc.after = attrs(size);
                    r.count = static_cast<uint32_t>(a.data.size());
                    r.committed = a.stable;
                    r.verf = {'v', 'e', 'r', 'f', 0, 0, 0, 1};
                }
                res = v3::encode(r);
            } else if (c.proc == v3::kProcRead) {
                const v3::ReadArgs a = v3::decode_read_args(c.args);
                v3::ReadResult r;
                r.status = v3::Status::ok;
                r.attrs = attrs(size);
                const uint64_t n =
                    a.offset >= size ? 0 : std::min<uint64_t>(a.count, size - a.offset);
                r.data.assign(n, 'z');
                r.count = static_cast<uint32_t>(n);
                r.eof = a.offset + n >= size;
                res = v3::encode(r);
            } else if (c.proc == v3::kProcCommit) {
                v3::CommitResult r;
                r.status = v3::Status::ok;
                r.wcc.after = attrs(size);
                r.verf = {'v', 'e', 'r', 'f', 0, 0, 0, 1};
                res = v3::encode(r);
            } else if (c.proc == 99) {
                // A garbled reply: a truncated GETATTR3res.
                res = {0, 0, 0, 0, 0, 0};
            } else {
                accept = 3;
            }
            send_fragment(fd, reply_msg(c.xid, res, accept));
        }
        ::close(fd);
    }
};

void test_client_against_fake_server(void**) {
    FakeDataServer ds;
    std::vector<std::string> trace;
    std::mutex trace_mu;
    v3::ClientOptions o;
    o.host = "127.0.0.1";
    o.port = ds.listener.port;
    o.timeout = std::chrono::seconds(5);
    o.trace = [&](const std::string& l) {
        std::lock_guard lock(trace_mu);
        trace.push_back(l);
    };
    auto c = v3::Client::connect(o);
    AuthSys cred;
    cred.uid = 1000001;
    cred.gid = 1000002;

    assert_true(c->null(cred).ok());
    // Several WRITEs in flight at once; each keeps its own post-op attributes.
    std::vector<char> data(4096, 'x');
    auto w1 = c->write_async(cred, kFh, 0, data, v3::Stable::unstable);
    auto w2 = c->write_async(cred, kFh, 4096, data, v3::Stable::file_sync);
    const v3::WriteResult r1 = w1.get();
    const v3::WriteResult r2 = w2.get();
    assert_true(r1.ok() && r2.ok());
    assert_int_equal(r1.count, 4096);
    assert_true(r1.committed == v3::Stable::unstable);
    assert_true(r2.committed == v3::Stable::file_sync);
    assert_true(r1.wcc.after && r1.wcc.after->size == 4096);
    assert_true(r2.wcc.after && r2.wcc.after->size == 8192);
    assert_int_equal(r2.verf[0], 'v');
    assert_int_equal(ds.last_uid.load(), 1000001);
    assert_int_equal(ds.last_gid.load(), 1000002);

    const v3::GetattrResult g = c->getattr(cred, kFh);
    assert_true(g.ok() && g.attrs->size == 8192 && g.attrs->uid == 1000001);
    assert_true(g.elapsed.count() > 0);
    const v3::GetattrResult stale = c->getattr(cred, FileHandle{{9}});
    assert_true(stale.replied() && stale.status == v3::Status::stale && !stale.attrs);

    const v3::ReadResult rd = c->read(cred, kFh, 8000, 4096);
    assert_true(rd.ok() && rd.eof && rd.count == 192 && rd.data.size() == 192);
    const v3::CommitResult cm = c->commit(cred, kFh);
    assert_true(cm.ok() && cm.wcc.after->size == 8192);

    // Fenced: NFS3ERR_ACCES is data, not an exception; no attributes.
    AuthSys fenced;
    fenced.uid = 666;
    const v3::WriteResult denied = c->write(fenced, kFh, 0, data, v3::Stable::file_sync);
    assert_true(denied.replied() && !denied.ok());
    assert_true(denied.status == v3::Status::acces);
    assert_false(denied.wcc.after.has_value());
    assert_string_equal(denied.describe().c_str(), "NFS3ERR_ACCES");

    // A procedure the server does not know, and a garbled reply: errors, not crashes.
    {
        RpcReply r = c->transport()
                         .call(v3::kProgram, v3::kVersion, 55, cred, {}, std::chrono::seconds(5))
                         .get();
        assert_true(r.status == RpcStatus::proc_unavail);
        RpcReply g2 = c->transport()
                          .call(v3::kProgram, v3::kVersion, 99, cred, {}, std::chrono::seconds(5))
                          .get();
        v3::GetattrResult out;
        bool threw = false;
        try {
            v3::decode(g2.body(), out);
        } catch (const XdrError&) {
            threw = true;
        }
        assert_true(threw);
    }
    {
        std::lock_guard lock(trace_mu);
        bool saw_write = false;
        for (const auto& l : trace) {
            saw_write |= l.find("<= WRITE") != std::string::npos &&
                         l.find("NFS3_OK") != std::string::npos &&
                         l.find("size=8192") != std::string::npos;
        }
        assert_true(saw_write);
    }
    c.reset(); // closes the connection; the fake server's loop ends
}

void test_client_connection_failures(void**) {
    // Nobody listens: connect throws TransportError.
    Listener l;
    const uint16_t port = l.port;
    ::close(l.fd);
    l.fd = -1;
    v3::ClientOptions o;
    o.host = "127.0.0.1";
    o.port = port;
    bool threw = false;
    try {
        v3::Client::connect(o);
    } catch (const TransportError&) {
        threw = true;
    }
    assert_true(threw);

    // The server hangs up mid-call: the result says so.
    Listener live;
    std::thread server([&] {
        const int fd = live.accept_one();
        read_record(fd);
        ::close(fd);
    });
    o.port = live.port;
    auto c = v3::Client::connect(o);
    const v3::GetattrResult r = c->getattr(AuthSys{}, kFh);
    server.join();
    assert_false(r.replied());
    assert_true(r.rpc_status == RpcStatus::connection_lost);
    assert_true(r.describe().find("RPC") == 0);
}

void test_mount(void**) {
    Listener l;
    std::thread server([&] {
        const int fd = l.accept_one();
        for (int i = 0; i < 2; ++i) {
            const Call c = parse_call(read_record(fd));
            if (!c.ok) {
                break;
            }
            const std::string path = v3::decode_mnt_args(c.args);
            v3::MountResult m;
            if (path == "/srv/ds1" && c.prog == v3::kMountProgram && c.vers == 3 && c.proc == 1) {
                m.fh = kFh;
                m.auth_flavors = {1};
            } else {
                m.status = 2; // MNT3ERR_NOENT
            }
            send_fragment(fd, reply_msg(c.xid, v3::encode(m)));
        }
        ::close(fd);
    });
    const FileHandle fh = v3::mount("127.0.0.1", l.port, "/srv/ds1");
    assert_true(fh == kFh);
    server.join();

    Listener l2;
    std::thread server2([&] {
        const int fd = l2.accept_one();
        const Call c = parse_call(read_record(fd));
        v3::MountResult m;
        m.status = 2;
        send_fragment(fd, reply_msg(c.xid, v3::encode(m)));
        ::close(fd);
    });
    bool threw = false;
    try {
        v3::mount("127.0.0.1", l2.port, "/nope");
    } catch (const NfsError& e) {
        threw = e.status() == 2 && std::string(e.what()).find("/nope") != std::string::npos;
    }
    server2.join();
    assert_true(threw);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_round_trip),
        cmocka_unit_test(test_results_round_trip),
        cmocka_unit_test(test_hostile_replies),
        cmocka_unit_test(test_bounded_decoding),
        cmocka_unit_test(test_status_mapping),
        cmocka_unit_test(test_client_against_fake_server),
        cmocka_unit_test(test_client_connection_failures),
        cmocka_unit_test(test_mount),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
