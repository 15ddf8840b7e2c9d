// SPDX-License-Identifier: LGPL-3.0-or-later
// LentBuffer (fleet/lent_buffer.hpp): READ replies copied into a caller's buffer, as much
// as fits, and nothing once the caller has closed it (its buffer may be gone by then); a
// WRITE's bytes used only while the buffer is open.
#include "cmocka_cpp.hpp"
#include "fleet/lent_buffer.hpp"

#include <vector>

using flexfiles::fleet::ReadSink;
using flexfiles::fleet::WriteSource;

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

void test_a_write_source_is_used_until_it_is_closed(void**) {
    const std::vector<std::uint8_t> bytes{7, 8, 9};
    WriteSource lent{std::span<const std::uint8_t>(bytes)};
    std::size_t seen = 0;
    assert_true(lent.use([&](std::span<const std::uint8_t> b) { seen = b.size(); }));
    assert_int_equal(seen, 3);
    lent.close();
    assert_false(lent.use([&](std::span<const std::uint8_t>) { seen = 0; }));
    assert_int_equal(seen, 3);
    // One that owns its bytes holds them itself.
    WriteSource owned{std::vector<std::uint8_t>(5, 1)};
    assert_true(owned.use([&](std::span<const std::uint8_t> b) { seen = b.size(); }));
    assert_int_equal(seen, 5);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_from_where_each_reply_starts),
        cmocka_unit_test(test_a_closed_sink_takes_nothing),
        cmocka_unit_test(test_a_write_source_is_used_until_it_is_closed),
    };
    return cmocka_run_group_tests_name("fleet_lent_buffer", tests, nullptr, nullptr);
}
