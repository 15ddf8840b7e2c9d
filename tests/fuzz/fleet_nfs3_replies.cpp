// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fuzz target fleet_nfs3_replies: the NFSv3 replies the MDS's fleet gets from its data
// servers, as it gets them: decoded by libnfs (zdr_GETATTR3res, zdr_SETATTR3res,
// zdr_WRITE3res, zdr_COMMIT3res: the fleet's fallback GETATTR, its fencing SETATTR, the
// proxied WRITE and COMMIT), then converted (fleet/libnfs_nfs3.hpp) into what the cache
// and the layout code take (cache/ds_attrs.hpp). The first input byte picks the reply.
//
// Invariants: a reply that decodes converts; attributes are present exactly when the
// reply says they follow; the cache's view carries every attribute the reply had.
#include "cache/ds_attrs.hpp"
#include "fleet/libnfs_nfs3.hpp"
#include "fuzz_support.hpp"

#include <nfsc/libnfs-zdr.h>

using namespace flexfiles;

namespace {

constexpr const char* kTarget = "fleet_nfs3_replies";

// libnfs 5.0.2's libnfs_zdr_opaque copies a fixed-size opaque (a write verifier) before it
// checks that the reply holds it: a truncated WRITE or COMMIT reply makes it read up to 8
// bytes past the buffer (found by this target; libnfs is Debian's, not ours to patch).
// The reply is handed to it with that much zeroed slack after its end, so that the
// target goes on fuzzing what the fleet does with libnfs's output.
constexpr std::size_t kLibnfsOverread = 8;

template <typename Res>
bool decode(std::span<const std::uint8_t> bytes, Res& res, uint32_t (*zdr)(ZDR*, Res*)) {
    std::vector<char> copy(bytes.size() + kLibnfsOverread, 0);
    std::copy(bytes.begin(), bytes.end(), copy.begin());
    ZDR z;
    libnfs_zdrmem_create(&z, copy.data(), static_cast<uint32_t>(bytes.size()), ZDR_DECODE);
    const bool ok = zdr(&z, &res) != 0;
    libnfs_zdr_destroy(&z);
    return ok;
}

template <typename Res> fuzz::Bytes encode(Res& res, uint32_t (*zdr)(ZDR*, Res*)) {
    std::vector<char> buf(1024);
    ZDR z;
    libnfs_zdrmem_create(&z, buf.data(), static_cast<uint32_t>(buf.size()), ZDR_ENCODE);
    FUZZ_CHECK(kTarget, zdr(&z, &res));
    buf.resize(libnfs_zdr_getpos(&z));
    libnfs_zdr_destroy(&z);
    return fuzz::bytes_of(buf);
}

void check_post_op(const post_op_attr& p) {
    const std::optional<nfs3::Fattr> a = fleet::from_libnfs(p);
    FUZZ_CHECK(kTarget, a.has_value() == (p.attributes_follow != 0));
    if (a) {
        const wcc::DsAttrs c = mds::to_cache_attrs(*a);
        FUZZ_CHECK(kTarget, c.size == a->size && c.uid == a->uid && c.gid == a->gid);
    }
}

void check_wcc(const wcc_data& w) {
    const nfs3::Wcc wcc = fleet::from_libnfs(w);
    FUZZ_CHECK(kTarget, wcc.before.has_value() == (w.before.attributes_follow != 0));
    check_post_op(w.after);
}

fattr3 attrs() {
    fattr3 a{};
    a.type = NF3REG;
    a.mode = 0100640;
    a.nlink = 1;
    a.uid = 1000001;
    a.gid = 1000001;
    a.size = 1 << 20;
    a.used = 1 << 20;
    a.fileid = 9;
    a.mtime.seconds = 1'800'000'000;
    a.ctime.seconds = 1'800'000'000;
    a.ctime.nseconds = 999'999'999;
    return a;
}

void seeds(fuzz::SeedWriter& w) {
    GETATTR3res g{};
    g.status = NFS3_OK;
    g.GETATTR3res_u.resok.obj_attributes = attrs();
    w.add("getattr_ok", 0, encode(g, zdr_GETATTR3res));
    SETATTR3res s{};
    s.status = NFS3_OK;
    s.SETATTR3res_u.resok.obj_wcc.before.attributes_follow = 1;
    s.SETATTR3res_u.resok.obj_wcc.after.attributes_follow = 1;
    s.SETATTR3res_u.resok.obj_wcc.after.post_op_attr_u.attributes = attrs();
    w.add("setattr_ok_wcc", 1, encode(s, zdr_SETATTR3res));
    WRITE3res wr{};
    wr.status = NFS3_OK;
    wr.WRITE3res_u.resok.count = 4096;
    wr.WRITE3res_u.resok.committed = FILE_SYNC;
    wr.WRITE3res_u.resok.file_wcc.after.attributes_follow = 1;
    wr.WRITE3res_u.resok.file_wcc.after.post_op_attr_u.attributes = attrs();
    w.add("write_ok", 2, encode(wr, zdr_WRITE3res));
    WRITE3res denied{};
    denied.status = NFS3ERR_ACCES;
    w.add("write_acces", 2, encode(denied, zdr_WRITE3res));
    COMMIT3res c{};
    c.status = NFS3_OK;
    w.add("commit_ok", 3, encode(c, zdr_COMMIT3res));
}

} // namespace

FF_FUZZ_SEEDS(kTarget, seeds)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    const std::uint8_t which = in.u8() % 4;
    const auto bytes = in.rest();
    switch (which) {
    case 0: {
        GETATTR3res r{};
        if (decode(bytes, r, zdr_GETATTR3res) && enum_bits(r.status) == NFS3_OK) {
            const nfs3::Fattr a = fleet::from_libnfs(r.GETATTR3res_u.resok.obj_attributes);
            FUZZ_CHECK(kTarget, a.size == r.GETATTR3res_u.resok.obj_attributes.size);
        }
        break;
    }
    case 1: {
        SETATTR3res r{};
        if (decode(bytes, r, zdr_SETATTR3res))
            check_wcc(enum_bits(r.status) == NFS3_OK ? r.SETATTR3res_u.resok.obj_wcc
                                                     : r.SETATTR3res_u.resfail.obj_wcc);
        break;
    }
    case 2: {
        WRITE3res r{};
        if (decode(bytes, r, zdr_WRITE3res)) {
            check_wcc(enum_bits(r.status) == NFS3_OK ? r.WRITE3res_u.resok.file_wcc
                                                     : r.WRITE3res_u.resfail.file_wcc);
            if (enum_bits(r.status) == NFS3_OK)
                (void)fleet::from_libnfs(r.WRITE3res_u.resok.verf);
        }
        break;
    }
    default: {
        COMMIT3res r{};
        if (decode(bytes, r, zdr_COMMIT3res)) {
            check_wcc(enum_bits(r.status) == NFS3_OK ? r.COMMIT3res_u.resok.file_wcc
                                                     : r.COMMIT3res_u.resfail.file_wcc);
            if (enum_bits(r.status) == NFS3_OK)
                (void)fleet::from_libnfs(r.COMMIT3res_u.resok.verf);
        }
        break;
    }
    }
    return 0;
}
