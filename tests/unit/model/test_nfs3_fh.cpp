// SPDX-License-Identifier: LGPL-3.0-or-later
// An NFSv3 filehandle held inline (model/nfs3.hpp), as data files (model/data_files.hpp) and
// the fleet's calls hold it: NFSv3's 1 to 64 bytes, equal exactly when the bytes are, never
// silently cut.
#include "cmocka_cpp.hpp"
#include "model/data_files.hpp"
#include "model/nfs3.hpp"

#include <stdexcept>
#include <vector>

using flexfiles::mds::DataFile;
using Fh = flexfiles::nfs3::Fh;

namespace {

void test_holds_the_bytes(void**) {
    const std::vector<std::uint8_t> bytes{0x01, 0x00, 0xff, 0x7f};
    Fh fh = bytes;
    assert_int_equal(fh.size(), 4);
    assert_false(fh.empty());
    assert_true(fh.to_vector() == bytes);
    assert_true(std::vector<std::uint8_t>(fh.begin(), fh.end()) == bytes);
    assert_memory_equal(fh.data(), bytes.data(), bytes.size());
    assert_true(Fh{}.empty());
}

void test_equal_exactly_when_the_bytes_are(void**) {
    Fh a{1, 2, 3};
    assert_true(a == (Fh{1, 2, 3}));
    assert_false(a == (Fh{1, 2}));
    assert_false(a == (Fh{1, 2, 3, 0})); // a trailing zero is a byte of the handle
    assert_false(a == (Fh{1, 2, 4}));
    // Made shorter again, no byte of the longer handle is left to compare.
    Fh b{9, 9, 9, 9, 9};
    b.assign(a.data(), a.size());
    assert_true(a == b);
    b.clear();
    assert_true(b == Fh{});
}

void test_sixty_four_bytes_and_no_more(void**) {
    const std::vector<std::uint8_t> max(64, 0xab);
    Fh fh = max;
    assert_int_equal(fh.size(), 64);
    assert_true(fh.to_vector() == max);
    const std::vector<std::uint8_t> over(65, 0xab);
    bool threw = false;
    try {
        Fh too_long = over;
        (void)too_long;
    } catch (const std::length_error&) {
        threw = true;
    }
    assert_true(threw);
    // A failed assignment leaves the handle as it was.
    threw = false;
    try {
        fh.assign(over.data(), over.size());
    } catch (const std::length_error&) {
        threw = true;
    }
    assert_true(threw);
    assert_true(fh.to_vector() == max);
}

void test_off_the_wire(void**) {
    const std::uint8_t bytes[65] = {0xde, 0xad, 0x01};
    const auto fh = Fh::from_bytes(bytes, 3);
    assert_true(fh.has_value());
    assert_true(*fh == (Fh{0xde, 0xad, 0x01}));
    assert_string_equal(fh->hex().c_str(), "dead01");
    assert_true(Fh::from_bytes(bytes, 64).has_value());
    // No handle is empty or longer than 64 bytes: refused, not thrown.
    assert_false(Fh::from_bytes(bytes, 0).has_value());
    assert_false(Fh::from_bytes(bytes, 65).has_value());
    assert_false(Fh::from_bytes(nullptr, 3).has_value());
}

void test_data_files_compare_their_handles(void**) {
    DataFile a;
    a.fh = {1, 2, 3};
    DataFile b = a;
    assert_true(a == b);
    b.fh = {1, 2, 4};
    assert_false(a == b);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holds_the_bytes),
        cmocka_unit_test(test_equal_exactly_when_the_bytes_are),
        cmocka_unit_test(test_sixty_four_bytes_and_no_more),
        cmocka_unit_test(test_off_the_wire),
        cmocka_unit_test(test_data_files_compare_their_handles),
    };
    return cmocka_run_group_tests_name("model_nfs3_fh", tests, nullptr, nullptr);
}
