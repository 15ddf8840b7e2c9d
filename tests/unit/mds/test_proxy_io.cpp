// SPDX-License-Identifier: LGPL-3.0-or-later
// Proxy I/O (fsal_flexfiles/mds/proxy_io.hpp) without data servers: the order in which
// reads try mirrors, and failures that name the file, the mirror, the data file and the
// data server, and are counted.
#include "cmocka_cpp.hpp"
#include "mds/proxy_io.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <cstring>

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;
using fleet::Health;

namespace {

void test_read_order(void**) {
    using V = std::vector<std::size_t>;
    assert_true(ProxyIo::read_order({Health::up, Health::up, Health::up}, 0) == (V{0, 1, 2}));
    assert_true(ProxyIo::read_order({Health::up, Health::up, Health::up}, 1) == (V{1, 2, 0}));
    assert_true(ProxyIo::read_order({Health::up, Health::up, Health::up}, 5) == (V{2, 0, 1}));
    // Healthy first, then Suspect, then Down, whatever the rotation.
    assert_true(ProxyIo::read_order({Health::down, Health::suspect, Health::up}, 7) ==
                (V{2, 1, 0}));
    assert_true(ProxyIo::read_order({Health::suspect, Health::up, Health::down, Health::up}, 1) ==
                (V{3, 1, 0, 2}));
    assert_true(ProxyIo::read_order({}, 3).empty());
}

DataFileMap two_mirrors() {
    DataFileMap map;
    map.file_id = 0x4d2;
    for (std::uint32_t m = 0; m < 2; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = m + 1;
        df.fh = {1, 2, 3, static_cast<std::uint8_t>(m)};
        df.name = "ff-00000000000004d2-m" + std::to_string(m);
        map.files.push_back(df);
    }
    return map;
}

void test_failures_name_everything(void**) {
    fleet::Fleet fleet;
    // Data server 2 is not configured.
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));
    DataPathCounters counters;
    wcc::AttrCache cache(16);
    ProxyIo io(fleet, &cache, counters, {{1, IoSizes{4096, 4096}}}, 500ms);
    const DataFileMap map = two_mirrors();

    const std::vector<std::uint8_t> data(10000, 0xab);
    auto st = io.write(ObjectKey{}, map, 0, data);
    assert_false(st.ok());
    print_message("write: %s\n", st.message.c_str());
    assert_non_null(std::strstr(st.message.c_str(), "file 1234 mirror "));
    assert_non_null(std::strstr(st.message.c_str(), "(data file ff-00000000000004d2-m"));
    assert_int_equal(DataPathCounters::get(counters.proxy_writes), 1);
    assert_int_equal(DataPathCounters::get(counters.proxy_write_errors), 1);
    assert_int_equal(DataPathCounters::get(counters.proxy_bytes_written), 0);

    std::vector<std::uint8_t> buffer(100);
    auto r = io.read(map, 0, buffer);
    assert_false(r.status.ok());
    print_message("read: %s\n", r.status.message.c_str());
    assert_non_null(
        std::strstr(r.status.message.c_str(), "no mirror of file 1234 could be read (2 tried)"));
    assert_int_equal(r.count, 0);
    assert_int_equal(DataPathCounters::get(counters.proxy_read_errors), 1);

    st = io.truncate(ObjectKey{}, map, 0);
    assert_false(st.ok());
    assert_non_null(
        std::strstr(st.message.c_str(), "file 1234 mirror 0 (data file ff-00000000000004d2-m0)"));
    assert_int_equal(DataPathCounters::get(counters.truncate_errors), 1);
    // A failed truncate sets no barrier in the cache.
    assert_false(cache.merged(0x4d2).has_value());

    st = io.commit(map, 0, 0);
    assert_false(st.ok());
    assert_int_equal(DataPathCounters::get(counters.proxy_commit_errors), 1);

    DataFileMap bad_fh = map;
    bad_fh.files.resize(1);
    bad_fh.files[0].fh.clear(); // an empty handle is none: NFSv3 handles have 1 to 64 bytes
    st = io.write(ObjectKey{}, bad_fh, 0, data);
    assert_non_null(std::strstr(st.message.c_str(), "not a valid NFSv3 filehandle"));

    st = io.write(ObjectKey{}, DataFileMap{}, 0, data);
    assert_non_null(std::strstr(st.message.c_str(), "has no data files"));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_order),
        cmocka_unit_test(test_failures_name_everything),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
