// SPDX-License-Identifier: LGPL-3.0-or-later
// Data-file names on the data servers (model/naming.hpp).
#include "cmocka_cpp.hpp"
#include "model/naming.hpp"

using namespace flexfiles::fleet;

namespace {

void test_golden(void**) {
    assert_string_equal(data_file_name(0x4d2, 1).c_str(), "ff-00000000000004d2-m1");
    assert_string_equal(data_file_name(0, 0).c_str(), "ff-0000000000000000-m0");
    assert_string_equal(data_file_name(UINT64_MAX, UINT32_MAX).c_str(),
                        "ff-ffffffffffffffff-m4294967295");
}

void test_roundtrip(void**) {
    for (std::uint64_t f : std::initializer_list<std::uint64_t>{0, 1, 0xdeadbeef, UINT64_MAX})
        for (std::uint32_t m : {0u, 1u, 9u, 10u, 123u, UINT32_MAX}) {
            auto p = parse_data_file_name(data_file_name(f, m));
            assert_true(p.has_value());
            assert_true(p->fileid == f);
            assert_int_equal(p->mirror, m);
        }
}

void test_rejects(void**) {
    const char* bad[] = {
        "",
        "ff-00000000000004d2-m",            // no mirror
        "ff-00000000000004d2-m01",          // leading zero
        "ff-00000000000004D2-m1",           // uppercase hex
        "ff-4d2-m1",                        // short file id
        "ff-00000000000004d2x-m1",          // long file id
        "fx-00000000000004d2-m1",           // prefix
        "ff-00000000000004d2_m1",           // separator
        "ff-00000000000004d2-m4294967296",  // mirror overflow
        "ff-00000000000004d2-m1a",          // junk
        "ff-00000000000004d2-m12345678901", // too long
        "ff-000000000000g4d2-m1",           // non-hex
    };
    for (const char* s : bad)
        assert_false(parse_data_file_name(s).has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests_name("fleet_naming", tests, nullptr, nullptr);
}
