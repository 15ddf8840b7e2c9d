// SPDX-License-Identifier: LGPL-3.0-or-later
// deviceid4 of a data server (model/deviceid.hpp): a pure, documented function of the Id.
#include "cmocka_cpp.hpp"
#include "model/deviceid.hpp"

#include <cstring>
#include <set>

using namespace flexfiles::fleet;

namespace {

void test_golden_format(void**) {
    // Pinned bytes: changing them breaks every layout a client holds across an MDS restart.
    const std::uint8_t want[16] = {0x01, 0x01, 0x46, 0x46, 0,    0,    0,    0,
                                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02};
    DeviceId d = make_deviceid(2);
    assert_memory_equal(d.data(), want, 16);
    assert_string_equal(deviceid_hex(d).c_str(), "01014646000000000000000000000002");

    DeviceId big = make_deviceid(0x0102030405060708ull, 7);
    assert_string_equal(deviceid_hex(big).c_str(), "07014646000000000102030405060708");
}

void test_stable_and_distinct(void**) {
    // Same Id -> same bytes (no time, address or randomness in it).
    assert_true(make_deviceid(42) == make_deviceid(42));
    std::set<DeviceId> seen;
    for (std::uint64_t id = 1; id <= 1000; ++id)
        seen.insert(make_deviceid(id));
    assert_int_equal(seen.size(), 1000);
    assert_true(make_deviceid(5, 1) != make_deviceid(5, 2));
}

void test_roundtrip(void**) {
    for (std::uint64_t id :
         std::initializer_list<std::uint64_t>{1, 2, 255, 256, 0xffffffff, UINT64_MAX}) {
        auto back = deviceid_ds_id(make_deviceid(id));
        assert_true(back.has_value());
        assert_true(*back == id);
    }
}

void test_rejects_foreign(void**) {
    DeviceId d = make_deviceid(9);
    DeviceId bad = d;
    bad[1] = 2; // version
    assert_false(deviceid_ds_id(bad).has_value());
    bad = d;
    bad[2] = 'G'; // magic
    assert_false(deviceid_ds_id(bad).has_value());
    bad = d;
    bad[5] = 1; // reserved
    assert_false(deviceid_ds_id(bad).has_value());
    DeviceId zero{};
    assert_false(deviceid_ds_id(zero).has_value());
}

void test_from_bytes(void**) {
    DeviceId d = make_deviceid(3);
    auto ok = deviceid_from_bytes(d.data(), 16);
    assert_true(ok.has_value());
    assert_true(*ok == d);
    assert_false(deviceid_from_bytes(d.data(), 15).has_value());
    assert_false(deviceid_from_bytes(d.data(), 17).has_value());
    assert_false(deviceid_from_bytes(nullptr, 16).has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_format), cmocka_unit_test(test_stable_and_distinct),
        cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_rejects_foreign),
        cmocka_unit_test(test_from_bytes),
    };
    return cmocka_run_group_tests_name("fleet_deviceid", tests, nullptr, nullptr);
}
