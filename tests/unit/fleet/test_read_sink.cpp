// SPDX-License-Identifier: LGPL-3.0-or-later
// ReadSink (fleet/read_sink.hpp): READ replies copied into a caller's buffer, as much as
// fits, and nothing once the caller has closed it (its buffer may be gone by then).
#include "cmocka_cpp.hpp"
#include "fleet/read_sink.hpp"

#include <vector>

using flexfiles::fleet::ReadSink;

namespace {

void test_fills_from_where_each_reply_starts(void**) {
    std::vector<std::uint8_t> buffer(8, 0);
    ReadSink sink(buffer);
    const std::vector<std::uint8_t> a{1, 2, 3}, b{4, 5, 6, 7, 8, 9};
    assert_int_equal(sink.fill(0, a), 3);
    assert_int_equal(sink.fill(3, b), 5); // one byte does not fit
    assert_true(buffer == (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    assert_int_equal(sink.fill(8, a), 0);
    assert_int_equal(sink.fill(100, a), 0);
}

void test_a_closed_sink_takes_nothing(void**) {
    std::vector<std::uint8_t> buffer(4, 0xee);
    ReadSink sink(buffer);
    sink.close();
    const std::vector<std::uint8_t> late{1, 2, 3, 4};
    assert_int_equal(sink.fill(0, late), 0);
    assert_true(buffer == (std::vector<std::uint8_t>(4, 0xee)));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_from_where_each_reply_starts),
        cmocka_unit_test(test_a_closed_sink_takes_nothing),
    };
    return cmocka_run_group_tests_name("fleet_read_sink", tests, nullptr, nullptr);
}
