// SPDX-License-Identifier: LGPL-3.0-or-later
// RFC 9766 Table 1: the LAYOUT_WCC body the client builds from NFSv3 post-operation
// attributes (client/flex_layout.hpp table1_attrs, client/flex_file.hpp build_layout_wcc),
// checked attribute by attribute and bit by bit after a round trip through the protocol
// header's decoder (protocols/include/nfs4_layout_wcc_xdr.h).
#include "client/flex_file.hpp"
#include "cmocka_cpp.hpp"
#include "nfs4_layout_wcc_xdr.h"

#include <cstring>

using namespace flexfiles::client;

namespace {

nfs3::Fattr post_op(uint64_t size, uint32_t ctime_ns) {
    nfs3::Fattr a;
    a.type = nfs3::Ftype::reg;
    a.mode = 0100640; // a server may send the file-type bits along
    a.nlink = 1;
    a.uid = 1000001;
    a.gid = 4294967295u;
    a.size = size;
    a.used = 8192;
    a.fsid = 77;
    a.fileid = 1234;
    a.atime = nfs3::Time{1700000000, 111};
    a.mtime = nfs3::Time{1700000001, 222};
    a.ctime = nfs3::Time{1700000002, ctime_ns};
    return a;
}

void test_table1_values(void**) {
    const Fattr f = table1_attrs(post_op(4194304, 333));
    assert_true(f.mask() == layout_wcc_table1_attrs());
    assert_true(f.size == 4194304u);
    assert_true(f.space_used == 8192u);
    assert_true(f.mode == 0640u);
    assert_true(f.owner == std::string("1000001"));
    assert_true(f.owner_group == std::string("4294967295"));
    assert_true(f.time_access == (NfsTime{1700000000, 111}));
    assert_true(f.time_modify == (NfsTime{1700000001, 222}));
    assert_true(f.time_metadata == (NfsTime{1700000002, 333}));
    // Nothing else: no type, no fileid, no change.
    assert_false(f.type.has_value() || f.fileid.has_value() || f.change.has_value());
}

FlexLayout two_mirror_layout() {
    FlexLayout l;
    l.stateid.seqid = 2;
    l.stateid.other[0] = 'L';
    for (int m = 0; m < 2; ++m) {
        FlexDataServer ds;
        ds.deviceid[0] = 1;
        ds.deviceid[15] = static_cast<char>(m + 1);
        ds.stateid = stateid4{}; // anonymous, as the FLEXFILES MDS hands out
        ds.fh_versions.push_back(FileHandle{{static_cast<char>(0x10 + m), 2, 3}});
        ds.user = "1000001";
        ds.group = "1000001";
        l.mirrors.push_back(FlexMirror{{ds}});
    }
    return l;
}

void test_body_from_post_op_attrs(void**) {
    const FlexLayout l = two_mirror_layout();
    std::vector<FlexDataFile> files(2);
    for (std::size_t m = 0; m < 2; ++m) {
        files[m].mirror = m;
        files[m].index = 0;
        files[m].ds = l.mirrors[m].data_servers[0];
    }
    files[0].attrs = post_op(4194304, 10);
    files[1].attrs = post_op(4194304 - 4096, 20); // the mirrors need not agree

    const std::vector<char> body = encode_flex_layout_wcc(build_layout_wcc(l, files));
    ff_layout_wcc4 wire;
    assert_true(ff_layout_wcc4_decode(body.data(), body.size(), &wire));
    assert_int_equal(wire.fflw_mirrors.fflw_mirrors_len, 2);
    for (u_int m = 0; m < 2; ++m) {
        const ff_mirror_wcc4& mw = wire.fflw_mirrors.fflw_mirrors_val[m];
        assert_int_equal(mw.ffmw_data_servers.ffmw_data_servers_len, 1);
        const ff_data_server_wcc4& d = mw.ffmw_data_servers.ffmw_data_servers_val[0];
        // The triple names the data file as the layout did.
        assert_int_equal(d.ffdsw_deviceid[15], m + 1);
        assert_int_equal(d.ffdsw_stateid.seqid, 0);
        assert_int_equal(d.ffdsw_fh_vers.ffdsw_fh_vers_len, 1);
        assert_int_equal(d.ffdsw_fh_vers.ffdsw_fh_vers_val[0].nfs_fh4_len, 3);
        assert_int_equal(d.ffdsw_fh_vers.ffdsw_fh_vers_val[0].nfs_fh4_val[0], 0x10 + m);
        // The bitmap: exactly the Table 1 bits.
        //   word 0: size (4)
        //   word 1: mode 33, owner 36, owner_group 37, space_used 45, time_access 47,
        //           time_metadata 52, time_modify 53
        const bitmap4& bm = d.ffdsw_attributes.attrmask;
        assert_int_equal(bm.bitmap4_len, 2);
        assert_int_equal(bm.map[0], 1u << 4);
        assert_int_equal(bm.map[1], (1u << 1) | (1u << 4) | (1u << 5) | (1u << 13) | (1u << 15) |
                                        (1u << 20) | (1u << 21));
        assert_true(ff_wcc4_attrmask_is_table1(&bm));
        const Fattr a = decode_fattr4(d.ffdsw_attributes);
        assert_true(a.size == (m == 0 ? 4194304u : 4194304u - 4096));
        assert_true(a.space_used == 8192u);
        assert_true(a.mode == 0640u);
        assert_true(a.owner == std::string("1000001"));
        assert_true(a.owner_group == std::string("4294967295"));
        assert_true(a.time_access == (NfsTime{1700000000, 111}));
        assert_true(a.time_modify == (NfsTime{1700000001, 222}));
        assert_true(a.time_metadata == (NfsTime{1700000002, m == 0 ? 10u : 20u}));
    }
    ff_layout_wcc4_free(&wire);
}

void test_body_without_attrs(void**) {
    // A data file with no attributes yet is still named, with an empty mask.
    const FlexLayout l = two_mirror_layout();
    std::vector<FlexDataFile> files(1);
    files[0].mirror = 1;
    files[0].ds = l.mirrors[1].data_servers[0];
    files[0].attrs = post_op(1, 1);
    const FlexLayoutWcc w = build_layout_wcc(l, files);
    assert_int_equal(w.mirrors.size(), 2);
    assert_true(w.mirrors[0].data_servers[0].attrs.mask().empty());
    assert_true(w.mirrors[1].data_servers[0].attrs.mask() == layout_wcc_table1_attrs());

    const std::vector<char> body = encode_flex_layout_wcc(w);
    ff_layout_wcc4 wire;
    assert_true(ff_layout_wcc4_decode(body.data(), body.size(), &wire));
    const ff_data_server_wcc4& d0 =
        wire.fflw_mirrors.fflw_mirrors_val[0].ffmw_data_servers.ffmw_data_servers_val[0];
    assert_int_equal(d0.ffdsw_attributes.attr_vals.attrlist4_len, 0);
    ff_layout_wcc4_free(&wire);
}

void test_keep_newest(void**) {
    std::optional<nfs3::Fattr> slot;
    keep_newest(slot, std::nullopt);
    assert_false(slot.has_value());
    keep_newest(slot, post_op(100, 5));
    assert_true(slot->size == 100);
    // An older reply arriving late does not win.
    keep_newest(slot, post_op(50, 4));
    assert_true(slot->size == 100);
    // Same ctime: the larger size (a later write of the same instant).
    keep_newest(slot, post_op(200, 5));
    assert_true(slot->size == 200);
    keep_newest(slot, post_op(150, 5));
    assert_true(slot->size == 200);
    keep_newest(slot, post_op(10, 6)); // truncation: newer ctime wins
    assert_true(slot->size == 10);
    // A failed call without attributes changes nothing.
    keep_newest(slot, std::nullopt);
    assert_true(slot->size == 10);
}

void test_wcc_getattr_attrs(void**) {
    const AttrMask m = wcc_getattr_attrs();
    for (uint32_t a : {FATTR4_SIZE, FATTR4_SPACE_USED, FATTR4_TIME_MODIFY, FATTR4_TIME_METADATA,
                       FATTR4_TIME_ACCESS, FATTR4_CHANGE}) {
        assert_true(m.test(a));
    }
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table1_values),      cmocka_unit_test(test_body_from_post_op_attrs),
        cmocka_unit_test(test_body_without_attrs), cmocka_unit_test(test_keep_newest),
        cmocka_unit_test(test_wcc_getattr_attrs),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
