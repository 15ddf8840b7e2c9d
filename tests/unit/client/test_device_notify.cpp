// SPDX-License-Identifier: LGPL-3.0-or-later
// CB_NOTIFY_DEVICEID as the client decodes it (client/device_notify.hpp): the values of
// each notify4 by the bits of its mask, and what it refuses.
#include "client/device_notify.hpp"
#include "client/xdr_stream.hpp"
#include "cmocka_cpp.hpp"

#include <cstring>
#include <vector>

using namespace flexfiles::client;

namespace {

DeviceId4 dev(char n) {
    DeviceId4 id{};
    id[0] = 1;
    id[15] = n;
    return id;
}

// A notify4 with `mask` and, as notify_vals, `vals` (kept alive by the caller).
notify4 change(uint32_t mask, std::vector<char>& vals) {
    notify4 n;
    std::memset(&n, 0, sizeof(n));
    n.notify_mask.bitmap4_len = 1;
    n.notify_mask.map[0] = mask;
    n.notify_vals.notifylist4_len = static_cast<u_int>(vals.size());
    n.notify_vals.notifylist4_val = vals.data();
    return n;
}

// notify_deviceid_delete4 / change4 on the wire.
void put_u32(std::vector<char>& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        out.push_back(static_cast<char>((v >> shift) & 0xff));
}
void put_delete(std::vector<char>& out, const DeviceId4& id) {
    put_u32(out, LAYOUT4_FLEX_FILES);
    out.insert(out.end(), id.begin(), id.end());
}
void put_change(std::vector<char>& out, const DeviceId4& id, bool immediate) {
    put_delete(out, id);
    put_u32(out, immediate ? 1 : 0);
}

std::optional<std::vector<DeviceNotification>> decode(std::vector<notify4> changes) {
    CB_NOTIFY_DEVICEID4args args;
    args.cnda_changes.cnda_changes_len = static_cast<u_int>(changes.size());
    args.cnda_changes.cnda_changes_val = changes.data();
    return decode_device_notifications(args);
}

void test_one_delete_one_change(void**) {
    std::vector<char> del, chg;
    put_delete(del, dev(3));
    put_change(chg, dev(2), true);
    const auto got = decode({change(kNotifyDeviceDelete, del), change(kNotifyDeviceChange, chg)});
    assert_true(got.has_value());
    assert_int_equal(got->size(), 2);
    assert_int_equal((*got)[0].type, NOTIFY_DEVICEID4_DELETE);
    assert_true((*got)[0].deviceid == dev(3));
    assert_int_equal((*got)[0].layout_type, LAYOUT4_FLEX_FILES);
    assert_false((*got)[0].immediate);
    assert_int_equal((*got)[1].type, NOTIFY_DEVICEID4_CHANGE);
    assert_true((*got)[1].deviceid == dev(2));
    assert_true((*got)[1].immediate);
}

void test_both_bits_in_one_notify4(void**) {
    // Values in bit order: CHANGE (bit 1) first, then DELETE (bit 2).
    std::vector<char> vals;
    put_change(vals, dev(1), false);
    put_delete(vals, dev(2));
    const auto got = decode({change(kNotifyDeviceChange | kNotifyDeviceDelete, vals)});
    assert_true(got.has_value());
    assert_int_equal(got->size(), 2);
    assert_int_equal((*got)[0].type, NOTIFY_DEVICEID4_CHANGE);
    assert_true((*got)[0].deviceid == dev(1));
    assert_int_equal((*got)[1].type, NOTIFY_DEVICEID4_DELETE);
    assert_true((*got)[1].deviceid == dev(2));
}

void test_refused(void**) {
    std::vector<char> del;
    put_delete(del, dev(3));
    // No bit, a bit that names no type, the bit of a longer value, trailing bytes.
    assert_false(decode({change(0, del)}).has_value());
    assert_false(decode({change(kNotifyDeviceDelete | 1u, del)}).has_value());
    assert_false(decode({change(kNotifyDeviceChange, del)}).has_value());
    std::vector<char> longer = del;
    put_u32(longer, 0);
    assert_false(decode({change(kNotifyDeviceDelete, longer)}).has_value());
    // Stock Ganesha 4.3 sent DELETE with map[0] = 2 (the CHANGE bit) and a delete4 value.
    assert_false(decode({change(NOTIFY_DEVICEID4_DELETE, del)}).has_value());
    // An empty list is a valid (if useless) notification.
    const auto none = decode({});
    assert_true(none.has_value());
    assert_true(none->empty());
}

void test_names(void**) {
    assert_string_equal(notify_types_name(0).c_str(), "none");
    assert_string_equal(notify_types_name(kNotifyDeviceChange | kNotifyDeviceDelete).c_str(),
                        "CHANGE|DELETE");
    assert_string_equal(notify_types_name(kNotifyDeviceDelete | 0x20u).c_str(), "DELETE|0x20");
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_delete_one_change),
        cmocka_unit_test(test_both_bits_in_one_notify4),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
