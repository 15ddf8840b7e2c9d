// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target client_nfs3_replies: the NFSv3 replies the client library (tools/client/
// nfs3.hpp) decodes from a data server, chosen by the first input byte: GETATTR (fattr3),
// READ (post_op_attr, count, eof, data), WRITE (wcc_data, verifier, stable_how), COMMIT
// (wcc_data, verifier), MOUNT (filehandle, flavours).
//
// Invariants: a reply that decodes encodes back and decodes to an equal result; one that
// does not gets XdrError, nothing else.
#include "client/nfs3.hpp"
#include "client/xdr_stream.hpp"
#include "fuzz_support.hpp"

using flexfiles::client::XdrError;
using namespace flexfiles::client::nfs3;

namespace {

constexpr const char* kTarget = "client_nfs3_replies";

template <typename Result> void round_trip(std::span<const char> bytes) {
    Result r;
    try {
        decode(bytes, r);
    } catch (const XdrError&) {
        return;
    }
    Result back;
    const std::vector<char> again = encode(r);
    decode(again, back); // must not throw: it is what we just wrote
    FUZZ_CHECK(kTarget, back == r);
}

void mount(std::span<const char> bytes) {
    MountResult r;
    try {
        r = decode_mount_result(bytes);
    } catch (const XdrError&) {
        return;
    }
    FUZZ_CHECK(kTarget, decode_mount_result(encode(r)) == r);
}

Fattr attrs() {
    Fattr a;
    a.type = Ftype::reg;
    a.mode = 0640;
    a.nlink = 1;
    a.uid = 1000001;
    a.gid = 1000001;
    a.size = 1 << 20;
    a.used = 1 << 20;
    a.fileid = 77;
    a.atime = Time{1'800'000'000, 1};
    a.mtime = Time{1'800'000'000, 2};
    a.ctime = Time{1'800'000'000, 3};
    return a;
}

void seeds(fuzz::SeedWriter& w) {
    GetattrResult g;
    g.status = Status::ok;
    g.attrs = attrs();
    w.add("getattr_ok", 0, fuzz::bytes_of(encode(g)));
    ReadResult r;
    r.status = Status::ok;
    r.attrs = attrs();
    r.data = std::vector<char>(13, 'r');
    r.count = 13;
    r.eof = true;
    w.add("read_ok_eof", 1, fuzz::bytes_of(encode(r)));
    WriteResult wr;
    wr.status = Status::ok;
    wr.wcc.before = WccAttr{4096, Time{1, 2}, Time{3, 4}};
    wr.wcc.after = attrs();
    wr.count = 4096;
    wr.committed = Stable::file_sync;
    wr.verf = Verifier{1, 2, 3, 4, 5, 6, 7, 8};
    w.add("write_ok_wcc", 2, fuzz::bytes_of(encode(wr)));
    WriteResult denied;
    denied.status = Status::acces;
    w.add("write_acces", 2, fuzz::bytes_of(encode(denied)));
    CommitResult c;
    c.status = Status::ok;
    c.wcc.after = attrs();
    c.verf = Verifier{8, 7, 6, 5, 4, 3, 2, 1};
    w.add("commit_ok", 3, fuzz::bytes_of(encode(c)));
    MountResult m;
    m.fh.bytes = std::vector<char>(28, 'm');
    m.auth_flavors = {1, 390003};
    w.add("mount_ok", 4, fuzz::bytes_of(encode(m)));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    const std::uint8_t which = in.u8() % 5;
    const auto rest = in.rest();
    const std::span<const char> bytes{reinterpret_cast<const char*>(rest.data()), rest.size()};
    switch (which) {
    case 0:
        round_trip<GetattrResult>(bytes);
        break;
    case 1:
        round_trip<ReadResult>(bytes);
        break;
    case 2:
        round_trip<WriteResult>(bytes);
        break;
    case 3:
        round_trip<CommitResult>(bytes);
        break;
    default:
        mount(bytes);
        break;
    }
    return 0;
}
