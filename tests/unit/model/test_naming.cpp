// SPDX-License-Identifier: LGPL-3.0-or-later
// Data-file names on the data servers (model/naming.hpp): the form with the export's
// identity that new data files get, the old form stores made before identities keep, the
// parse round trip of both, and names neither would produce refused.
#include "cmocka_cpp.hpp"
#include "model/naming.hpp"

using namespace flexfiles::fleet;

namespace {

void test_golden(void**) {
    assert_string_equal(data_file_name(0x9f3c0a7b5d2e44e1, 0x4d2, 1).c_str(),
                        "ff-9f3c0a7b5d2e44e1-00000000000004d2-m1");
    assert_string_equal(data_file_name(1, 0, 0).c_str(), "ff-0000000000000001-0000000000000000-m0");
    assert_string_equal(data_file_name(UINT64_MAX, UINT64_MAX, UINT32_MAX).c_str(),
                        "ff-ffffffffffffffff-ffffffffffffffff-m4294967295");
    // The old form, as stores made before identities recorded it.
    assert_string_equal(legacy_data_file_name(0x4d2, 1).c_str(), "ff-00000000000004d2-m1");
    assert_string_equal(legacy_data_file_name(UINT64_MAX, UINT32_MAX).c_str(),
                        "ff-ffffffffffffffff-m4294967295");
    assert_string_equal(identity_hex(0xabc).c_str(), "0000000000000abc");
}

void test_roundtrip(void**) {
    for (std::uint64_t id : std::initializer_list<std::uint64_t>{1, 0x4d2, UINT64_MAX})
        for (std::uint64_t f : std::initializer_list<std::uint64_t>{0, 1, 0xdeadbeef, UINT64_MAX})
            for (std::uint32_t m : {0u, 1u, 9u, 10u, 123u, UINT32_MAX}) {
                auto p = parse_data_file_name(data_file_name(id, f, m));
                assert_true(p.has_value());
                assert_true(p->identity.has_value());
                assert_true(*p->identity == id);
                assert_true(p->fileid == f);
                assert_int_equal(p->mirror, m);

                auto old = parse_data_file_name(legacy_data_file_name(f, m));
                assert_true(old.has_value());
                assert_false(old->identity.has_value());
                assert_true(old->fileid == f);
                assert_int_equal(old->mirror, m);
            }
    // The same fileid and mirror in two exports: two names.
    assert_string_not_equal(data_file_name(1, 7, 0).c_str(), data_file_name(2, 7, 0).c_str());
    assert_true(parse_identity_hex(identity_hex(0x0123456789abcdef)) == 0x0123456789abcdefull);
}

void test_rejects(void**) {
    const char* bad[] = {
        "", "ff-",
        "ff-00000000000004d2",              // nothing after the fileid
        "ff-00000000000004d2-",             // nor after the separator
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
        // With an identity:
        "ff-9f3c0a7b5d2e44e1-00000000000004d2-m",                   // no mirror
        "ff-9f3c0a7b5d2e44e1-00000000000004d2-m01",                 // leading zero
        "ff-9f3c0a7b5d2e44e1-00000000000004d2",                     // no mirror part
        "ff-9f3c0a7b5d2e44e1-4d2-m1",                               // short fileid
        "ff-9f3c0a7b5d2e44-00000000000004d2-m1",                    // short identity
        "ff-9f3c0a7b5d2e44e1-00000000000004d2x-m1",                 // long fileid
        "ff-9F3C0A7B5D2E44E1-00000000000004d2-m1",                  // uppercase identity
        "ff-9f3c0a7b5d2e44e1_00000000000004d2-m1",                  // separator
        "ff-9f3c0a7b5d2e44e1-00000000000004d2_m1",                  // separator
        "ff-9f3c0a7b5d2e44e1-00000000000004d2-m1-x",                // junk
        "ff-9f3c0a7b5d2e44e1-00000000000004d2-00000000000004d2-m1", // two fileids
        "ff-9f3c0a7b5d2e44e1-00000000000004d2-m4294967296",         // mirror overflow
    };
    for (const char* s : bad) {
        if (parse_data_file_name(s).has_value())
            print_message("accepted: \"%s\"\n", s);
        assert_false(parse_data_file_name(s).has_value());
    }
    assert_false(parse_identity_hex("abc").has_value());
    assert_false(parse_identity_hex("000000000000000g").has_value());
    assert_false(parse_identity_hex("00000000000000000").has_value());
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
