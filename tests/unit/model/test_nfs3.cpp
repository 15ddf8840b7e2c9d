// SPDX-License-Identifier: LGPL-3.0-or-later
// The NFSv3 values and NFSv4 names the FSAL, the harness and the tools share
// (model/nfs3.hpp, model/nfs4_names.hpp).
#include "cmocka_cpp.hpp"
#include "model/nfs3.hpp"
#include "model/nfs4_names.hpp"

#include <sstream>
#include <string>

using namespace flexfiles;

namespace {

void test_status_names(void**) {
    assert_string_equal(nfs3::status_name(nfs3::Status::ok).c_str(), "NFS3_OK");
    assert_string_equal(nfs3::status_name(nfs3::Status::acces).c_str(), "NFS3ERR_ACCES");
    assert_string_equal(nfs3::status_name(nfs3::Status::not_sync).c_str(), "NFS3ERR_NOT_SYNC");
    assert_string_equal(nfs3::status_name(nfs3::Status::jukebox).c_str(), "NFS3ERR_JUKEBOX");
    // An unknown status off the wire keeps its number.
    assert_string_equal(nfs3::status_name(nfs3::Status{12345}).c_str(), "NFS3ERR_12345");
    // Every RFC 1813 value has its own name.
    for (std::uint32_t v : {0u,  1u,     2u,     5u,     6u,     13u,    17u,    18u,    19u,   20u,
                            21u, 22u,    27u,    28u,    30u,    31u,    63u,    66u,    69u,   70u,
                            71u, 10001u, 10002u, 10003u, 10004u, 10005u, 10006u, 10007u, 10008u})
        assert_true(nfs3::status_name(nfs3::Status{v}) != "NFS3ERR_" + std::to_string(v));
    std::ostringstream os;
    os << nfs3::Status::stale;
    assert_string_equal(os.str().c_str(), "NFS3ERR_STALE");
}

void test_stable_names(void**) {
    assert_string_equal(nfs3::stable_name(nfs3::StableHow::unstable), "UNSTABLE");
    assert_string_equal(nfs3::stable_name(nfs3::StableHow::data_sync), "DATA_SYNC");
    assert_string_equal(nfs3::stable_name(nfs3::StableHow::file_sync), "FILE_SYNC");
    assert_string_equal(nfs3::stable_name(nfs3::StableHow{7}), "STABLE_?");
}

void test_format_fattr(void**) {
    nfs3::Fattr a;
    a.mode = 0644;
    a.nlink = 1;
    a.uid = 1000;
    a.gid = 100;
    a.size = 4096;
    a.used = 8192;
    a.fileid = 42;
    a.atime = {1, 2};
    a.mtime = {3, 400000000};
    a.ctime = {5, 6};
    assert_string_equal(nfs3::format_fattr(a).c_str(),
                        "size=4096 used=8192 mode=0644 uid=1000 gid=100 nlink=1 fileid=42 "
                        "atime=1.000000002 mtime=3.400000000 ctime=5.000000006");
    std::ostringstream os;
    os << a;
    assert_string_equal(os.str().c_str(), ("{" + nfs3::format_fattr(a) + "}").c_str());
}

void test_values(void**) {
    nfs3::SetAttrs s;
    assert_true(s.empty());
    s.mtime = nfs3::Time{1, 0};
    assert_false(s.empty());
    assert_true((nfs3::Time{1, 5} < nfs3::Time{2, 0}));
    nfs3::Wcc w;
    w.after = nfs3::Fattr{};
    assert_true(w == (nfs3::Wcc{std::nullopt, nfs3::Fattr{}}));
    assert_true(nfs3::Fattr{}.type == nfs3::Ftype::reg);
}

void test_iomode_names(void**) {
    assert_string_equal(nfs4::iomode_name(nfs4::kIomodeRead).c_str(), "READ");
    assert_string_equal(nfs4::iomode_name(nfs4::kIomodeRw).c_str(), "RW");
    assert_string_equal(nfs4::iomode_name(nfs4::kIomodeAny).c_str(), "ANY");
    assert_string_equal(nfs4::iomode_name(7).c_str(), "iomode 7");
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names), cmocka_unit_test(test_stable_names),
        cmocka_unit_test(test_format_fattr), cmocka_unit_test(test_values),
        cmocka_unit_test(test_iomode_names),
    };
    return cmocka_run_group_tests_name("model_nfs3", tests, nullptr, nullptr);
}
