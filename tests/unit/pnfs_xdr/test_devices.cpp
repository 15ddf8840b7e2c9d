// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/devices: a deviceid -> the configured data server it names -> its
// ff_device_addr4 (what GETDEVICEINFO answers).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "pnfs/xdr/devices.hpp"

#include <vector>

using namespace flexfiles;
using namespace flexfiles::layout;

namespace {

config::ExportConfig three_servers() {
    config::ExportConfig cfg;
    cfg.sub_fsal = "VFS";
    const char* addrs[] = {"127.3.0.10", "127.3.0.11", "::1"};
    for (std::uint32_t i = 0; i < 3; i++) {
        config::DataServer ds;
        ds.id = 10 + i;
        ds.address = addrs[i];
        ds.nfs_port = static_cast<std::uint16_t>(2049 + i);
        ds.export_path = "/srv/ds" + std::to_string(i);
        ds.rsize = 65536u << i;
        ds.wsize = 32768u << i;
        cfg.data_servers.push_back(ds);
    }
    return cfg;
}

void test_lookup_by_deviceid(void**) {
    const config::ExportConfig cfg = three_servers();
    const config::DataServer* ds = find_data_server(cfg, fleet::make_deviceid(11));
    assert_non_null(ds);
    assert_int_equal(ds->id, 11);
    assert_string_equal(ds->address.c_str(), "127.3.0.11");

    // Ganesha dispatches on byte 0; whatever it is, the rest names the server
    assert_ptr_equal(find_data_server(cfg, fleet::make_deviceid(12, 7)), &cfg.data_servers[2]);
    // unknown Id
    assert_null(find_data_server(cfg, fleet::make_deviceid(13)));
    assert_null(find_data_server(cfg, fleet::make_deviceid(0)));
    // not our format: version, magic, reserved bytes
    for (std::size_t byte : {1, 2, 3, 4, 7}) {
        fleet::DeviceId dev = fleet::make_deviceid(10);
        dev[byte] ^= 0x5a;
        assert_null(find_data_server(cfg, dev));
    }
    // the Id is big-endian in bytes 8-15
    fleet::DeviceId dev{};
    dev[0] = 1;
    dev[1] = 1;
    dev[2] = 'F';
    dev[3] = 'F';
    dev[15] = 10;
    assert_ptr_equal(find_data_server(cfg, dev), &cfg.data_servers[0]);
    dev[8] = 1; // Id 2^56 + 10
    assert_null(find_data_server(cfg, dev));
    // an export without data servers
    assert_null(find_data_server(config::ExportConfig{}, fleet::make_deviceid(10)));
}

void test_device_addr_of(void**) {
    const config::ExportConfig cfg = three_servers();
    auto v4 = device_addr_of(cfg.data_servers[1]);
    assert_true(v4.has_value());
    assert_int_equal(v4->addrs.size(), 1);
    assert_string_equal(v4->addrs[0].netid.c_str(), "tcp");
    assert_string_equal(v4->addrs[0].uaddr.c_str(), "127.3.0.11.8.2"); // port 2050
    assert_int_equal(v4->versions.size(), 1);
    assert_int_equal(v4->versions[0].version, 3);
    assert_int_equal(v4->versions[0].minor_version, 0);
    assert_int_equal(v4->versions[0].rsize, 131072);
    assert_int_equal(v4->versions[0].wsize, 65536);
    assert_false(v4->versions[0].tightly_coupled);

    auto v6 = device_addr_of(cfg.data_servers[2]);
    assert_true(v6.has_value());
    assert_string_equal(v6->addrs[0].netid.c_str(), "tcp6");
    assert_string_equal(v6->addrs[0].uaddr.c_str(), "::1.8.3");

    config::DataServer named = cfg.data_servers[0];
    named.address = "ds1.example.org";
    assert_false(device_addr_of(named).has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_by_deviceid),
        cmocka_unit_test(test_device_addr_of),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
