// SPDX-License-Identifier: LGPL-3.0-or-later
// The FLEXFILES export configuration model (fsal_flexfiles/core/model/config.hpp): parser output to
// ExportConfig, and the rules validate() enforces.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}
#undef fail

#include "model/config.hpp"

#include <cstring>
#include <string>
#include <vector>

using namespace flexfiles::config;

namespace {

DataServer ds(uint32_t id, const char* address, uint16_t port = 2049) {
    DataServer d;
    d.id = id;
    d.address = address;
    d.nfs_port = port;
    d.export_path = "/export";
    return d;
}

ExportConfig two_servers() {
    ExportConfig cfg;
    cfg.sub_fsal = "VFS";
    cfg.data_servers = {ds(1, "127.0.0.2"), ds(2, "127.0.0.3")};
    return cfg;
}

// validate() reports exactly one problem, and it contains `needle`.
void expect_one(const ExportConfig& cfg, const char* needle) {
    const std::vector<std::string> problems = validate(cfg);
    for (const auto& p : problems)
        print_message("problem: %s\n", p.c_str());
    assert_int_equal(problems.size(), 1);
    assert_non_null(strstr(problems[0].c_str(), needle));
}

void test_defaults_are_usable(void**) {
    ExportConfig cfg = two_servers();
    assert_true(validate(cfg).empty());
    assert_int_equal(cfg.mirrors, 1);
    assert_true(cfg.stripe_unit == 1048576);
    assert_true(cfg.trust_wcc);
    assert_int_equal(cfg.wcc_max_age.count(), 1000);
    assert_int_equal(cfg.wcc_max_ctime_skew.count(), 60);
    assert_int_equal(cfg.ds_getattr_deadline.count(), 500);
    assert_int_equal(cfg.ds_io_timeout.count(), 5000);
    assert_true(cfg.layout_store.empty());
    cfg.mirrors = 2;
    assert_true(validate(cfg).empty());
}

void test_missing_address(void**) {
    ExportConfig cfg = two_servers();
    cfg.data_servers[1].address.clear();
    expect_one(cfg, "Data_Server block 2 (Id = 2): Address is missing");
}

void test_mirrors_exceed_servers(void**) {
    ExportConfig cfg = two_servers();
    cfg.mirrors = 3;
    expect_one(cfg, "Mirrors = 3 exceeds the number of Data_Server blocks (2)");
    cfg.data_servers.clear();
    cfg.mirrors = 1;
    expect_one(cfg, "Mirrors = 1 exceeds the number of Data_Server blocks (0)");
}

void test_mirrors_range(void**) {
    ExportConfig cfg = two_servers();
    cfg.mirrors = 0;
    expect_one(cfg, "Mirrors = 0 is out of range (1..3)");
    cfg.data_servers.push_back(ds(3, "127.0.0.4"));
    cfg.data_servers.push_back(ds(4, "127.0.0.5"));
    cfg.mirrors = 4;
    expect_one(cfg, "Mirrors = 4 is out of range (1..3)");
}

void test_duplicate_id(void**) {
    ExportConfig cfg = two_servers();
    cfg.data_servers[1].id = 1;
    expect_one(cfg, "Data_Server block 2 (Id = 1): Id = 1 is already used by Data_Server block 1");
}

void test_duplicate_endpoint(void**) {
    ExportConfig cfg = two_servers();
    cfg.data_servers[1].address = "127.0.0.2";
    expect_one(cfg, "Address:NFS_Port 127.0.0.2:2049 is already used by Data_Server block 1");
    // Same address, another port: two servers.
    cfg.data_servers[1].nfs_port = 2050;
    assert_true(validate(cfg).empty());
    // Two spellings of one IPv6 address are one address.
    cfg.data_servers = {ds(1, "::1"), ds(2, "0:0:0:0:0:0:0:1")};
    expect_one(cfg, "Address:NFS_Port [0:0:0:0:0:0:0:1]:2049 is already used");
}

void test_data_server_fields(void**) {
    ExportConfig cfg = two_servers();
    cfg.data_servers[0].id = 0;
    expect_one(cfg, "Data_Server block 1: Id is missing");

    cfg = two_servers();
    cfg.data_servers[0].address = "ds1.example.com";
    expect_one(cfg, "Address = \"ds1.example.com\" is not a numeric IPv4 or IPv6 address");

    cfg = two_servers();
    cfg.data_servers[1].export_path.clear();
    expect_one(cfg, "Data_Server block 2 (Id = 2): Export_Path is missing");
    cfg.data_servers[1].export_path = "relative/path";
    expect_one(cfg, "Export_Path = \"relative/path\" is not an absolute path");

    cfg = two_servers();
    cfg.data_servers[0].nfs_port = 0;
    expect_one(cfg, "NFS_Port = 0 is out of range (1..65535)");
    cfg = two_servers();
    cfg.data_servers[0].mnt_port = 0;
    expect_one(cfg, "MNT_Port = 0 is out of range");
    cfg = two_servers();
    cfg.data_servers[0].rsize = 100;
    expect_one(cfg, "Rsize = 100 is out of range (4096..16777216)");
    cfg = two_servers();
    cfg.data_servers[1].wsize = 32u << 20;
    expect_one(cfg, "Wsize = 33554432 is out of range");
}

void test_export_fields(void**) {
    ExportConfig cfg = two_servers();
    cfg.fencing_uids = {500, 400};
    expect_one(cfg, "Fencing_Uid_Min (500) is greater than Fencing_Uid_Max (400)");
    // One id cannot fence: the next owner would be the current one (next_fencing_id).
    cfg = two_servers();
    cfg.fencing_uids = {1000, 1000};
    expect_one(cfg, "Fencing_Uid_Min and Fencing_Uid_Max are both 1000: fencing needs at least "
                    "two ids");
    cfg = two_servers();
    cfg.fencing_gids = {7, 7};
    expect_one(cfg, "Fencing_Gid_Min and Fencing_Gid_Max are both 7");
    cfg = two_servers();
    cfg.fencing_gids.min = 0;
    expect_one(cfg, "Fencing_Gid_Min = 0 is out of range");
    cfg = two_servers();
    cfg.stripe_unit = 1000;
    expect_one(cfg, "Stripe_Unit = 1000 is out of range");
    cfg = two_servers();
    cfg.wcc_max_age = std::chrono::milliseconds(3600001);
    expect_one(cfg, "WCC_Max_Age = 3600001 is out of range");
    cfg.wcc_max_age = std::chrono::milliseconds(0); // 0 is allowed: never trust old WCC
    assert_true(validate(cfg).empty());
    cfg.wcc_max_ctime_skew = std::chrono::seconds(86401);
    expect_one(cfg, "WCC_Max_Ctime_Skew = 86401 is out of range (0..86400)");
    cfg.wcc_max_ctime_skew = std::chrono::seconds(0); // not ahead of the MDS's clock at all
    assert_true(validate(cfg).empty());
    cfg.ds_getattr_deadline = std::chrono::milliseconds(0);
    expect_one(cfg, "DS_Getattr_Deadline = 0 is out of range (1..60000)");
}

void test_data_path_fields(void**) {
    ExportConfig cfg = two_servers();
    cfg.ds_io_timeout = std::chrono::milliseconds(99);
    expect_one(cfg, "DS_IO_Timeout = 99 is out of range (100..120000)");
    cfg.ds_io_timeout = std::chrono::milliseconds(120001);
    expect_one(cfg, "DS_IO_Timeout = 120001 is out of range");
    cfg.ds_io_timeout = std::chrono::milliseconds(100);
    assert_true(validate(cfg).empty());
    cfg.ds_direct_connections = 257;
    expect_one(cfg, "DS_Direct_Connections = 257 is out of range (0..256)");
    cfg.ds_direct_connections = 0; // every WRITE through the event threads
    assert_true(validate(cfg).empty());
    cfg.ds_direct_spin = std::chrono::microseconds(1001);
    expect_one(cfg, "DS_Direct_Spin = 1001 is out of range (0..1000)");
    cfg.ds_direct_spin = std::chrono::microseconds(0); // sleep at once
    assert_true(validate(cfg).empty());
    cfg.resilver_recall_after = std::chrono::milliseconds(3600001);
    expect_one(cfg, "Resilver_Recall_After = 3600001 is out of range (0..3600000)");
    cfg.resilver_recall_after = std::chrono::milliseconds(0); // only wait
    assert_true(validate(cfg).empty());

    cfg.layout_store = "layouts.db";
    expect_one(cfg, "Layout_Store = \"layouts.db\" is not an absolute path");
    cfg.layout_store = "/srv/mds/layouts.db";
    assert_true(validate(cfg).empty());
    assert_string_equal(layout_store_path(cfg, 7, "/var/lib/nfs/ganesha").c_str(),
                        "/srv/mds/layouts.db");
    cfg.layout_store.clear();
    assert_string_equal(layout_store_path(cfg, 7, "/var/lib/nfs/ganesha").c_str(),
                        "/var/lib/nfs/ganesha/flexfiles/export-7.db");
    assert_string_equal(layout_store_path(cfg, 12, "/srv/state/").c_str(),
                        "/srv/state/flexfiles/export-12.db");
}

void test_sub_fsal(void**) {
    ExportConfig cfg = two_servers();
    cfg.sub_fsal.clear();
    expect_one(cfg, "nested FSAL block naming the metadata FSAL");
    cfg.sub_fsal = "flexfiles";
    expect_one(cfg, "FLEXFILES cannot stack on itself");
}

void test_every_problem_is_reported(void**) {
    ExportConfig cfg = two_servers();
    cfg.mirrors = 3;
    cfg.data_servers[1].id = 1;
    cfg.data_servers[1].address.clear();
    assert_int_equal(validate(cfg).size(), 3);
}

void test_from_parsed(void**) {
    char vfs[] = "VFS", a1[] = "127.0.0.2", p1[] = "/ds1", p2[] = "/ds2";
    ff_cfg_data_server second{};
    second.id = 9;
    second.address = nullptr; // block without Address
    second.nfs_port = 2050;
    second.mnt_port = 20049;
    second.export_path = p2;
    second.rsize = 65536;
    second.wsize = 32768;
    ff_cfg_data_server first{};
    first.id = 4;
    first.address = a1;
    first.nfs_port = 2049;
    first.mnt_port = 20048;
    first.export_path = p1;
    first.rsize = first.wsize = 1048576;
    first.next = &second;
    ff_cfg_export raw{};
    raw.sub_fsal_name = vfs;
    raw.data_servers = &first;
    raw.mirrors = 2;
    raw.stripe_unit = 65536;
    raw.fencing_uid_min = 10;
    raw.fencing_uid_max = 20;
    raw.fencing_gid_min = 30;
    raw.fencing_gid_max = 40;
    raw.trust_wcc = false;
    raw.wcc_max_age_ms = 250;
    raw.wcc_max_ctime_skew_s = 7;
    raw.ds_getattr_deadline_ms = 125;
    raw.ds_io_timeout_ms = 1500;
    raw.ds_direct_connections = 3;
    raw.ds_direct_spin_us = 40;
    char store[] = "/tmp/layouts.db";
    raw.layout_store = store;

    const ExportConfig cfg = from_parsed(raw);
    assert_string_equal(cfg.sub_fsal.c_str(), "VFS");
    assert_int_equal(cfg.data_servers.size(), 2);
    assert_int_equal(cfg.data_servers[0].id, 4);
    assert_string_equal(cfg.data_servers[0].endpoint().c_str(), "127.0.0.2:2049");
    assert_int_equal(cfg.data_servers[1].id, 9);
    assert_true(cfg.data_servers[1].address.empty());
    assert_int_equal(cfg.data_servers[1].mnt_port, 20049);
    assert_int_equal(cfg.data_servers[1].rsize, 65536);
    assert_int_equal(cfg.data_servers[1].wsize, 32768);
    assert_int_equal(cfg.mirrors, 2);
    assert_true(cfg.stripe_unit == 65536);
    assert_true((cfg.fencing_uids == IdRange{10, 20}));
    assert_true((cfg.fencing_gids == IdRange{30, 40}));
    assert_false(cfg.trust_wcc);
    assert_int_equal(cfg.wcc_max_age.count(), 250);
    assert_int_equal(cfg.wcc_max_ctime_skew.count(), 7);
    assert_int_equal(cfg.ds_direct_connections, 3);
    assert_int_equal(cfg.ds_direct_spin.count(), 40);
    assert_int_equal(cfg.ds_getattr_deadline.count(), 125);
    assert_int_equal(cfg.ds_io_timeout.count(), 1500);
    assert_string_equal(cfg.layout_store.c_str(), "/tmp/layouts.db");
    expect_one(cfg, "Data_Server block 2 (Id = 9): Address is missing");

    // Equality is what update_export uses to refuse a change.
    ExportConfig changed = cfg;
    assert_true(changed == cfg);
    changed.data_servers[0].wsize = 4096;
    assert_false(changed == cfg);
}

// READ layouts carry a uid outside the owners' range (a fencing moves owners within it).
void test_read_layout_uid(void**) {
    ExportConfig cfg = two_servers();
    assert_int_equal(read_layout_uid(cfg), FF_CFG_FENCING_ID_MAX_DEFAULT + 1); // derived
    cfg.fencing_uids = {5000, FF_CFG_FENCING_ID_MAX};
    assert_int_equal(read_layout_uid(cfg), 4999); // below, when nothing is left above
    assert_true(validate(cfg).empty());
    cfg.fencing_uids = {FF_CFG_FENCING_ID_MIN, FF_CFG_FENCING_ID_MAX};
    assert_int_equal(read_layout_uid(cfg), 0);
    expect_one(cfg, "leaves no uid outside it for READ layouts: set Fencing_Read_Uid");
    cfg.fencing_read_uid = 77; // inside the range
    expect_one(cfg,
               "Fencing_Read_Uid = 77 lies in Fencing_Uid_Min..Fencing_Uid_Max (1..4294967294)");

    cfg = two_servers();
    cfg.fencing_read_uid = 4242;
    assert_int_equal(read_layout_uid(cfg), 4242);
    assert_true(validate(cfg).empty());
    cfg.fencing_read_uid = FF_CFG_FENCING_ID_MIN_DEFAULT; // an owner's uid
    expect_one(cfg, "Fencing_Read_Uid = 1000000 lies in Fencing_Uid_Min..Fencing_Uid_Max");
    cfg.fencing_read_uid = UINT32_MAX; // (uid_t)-1: "unchanged" to chown
    expect_one(cfg, "Fencing_Read_Uid = 4294967295 is out of range");
}

void test_describe(void**) {
    ExportConfig cfg = two_servers();
    cfg.data_servers[1].address = "fd00::3";
    const std::string line = describe(cfg);
    print_message("%s\n", line.c_str());
    assert_non_null(strstr(line.c_str(), "metadata FSAL VFS, 2 data server(s)"));
    assert_non_null(strstr(line.c_str(), "2=[fd00::3]:2049/export"));
    assert_non_null(strstr(
        line.c_str(), "DS_IO_Timeout = 5000 ms, DS_Direct_Connections = 8, DS_Direct_Spin = 0 us, "
                      "Resilver_Recall_After = 10000 ms, Layout_Store = (default)"));
    assert_non_null(strstr(line.c_str(), "READ layouts uid 2000000"));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_usable),
        cmocka_unit_test(test_missing_address),
        cmocka_unit_test(test_mirrors_exceed_servers),
        cmocka_unit_test(test_mirrors_range),
        cmocka_unit_test(test_duplicate_id),
        cmocka_unit_test(test_duplicate_endpoint),
        cmocka_unit_test(test_data_server_fields),
        cmocka_unit_test(test_export_fields),
        cmocka_unit_test(test_data_path_fields),
        cmocka_unit_test(test_sub_fsal),
        cmocka_unit_test(test_every_problem_is_reported),
        cmocka_unit_test(test_from_parsed),
        cmocka_unit_test(test_read_layout_uid),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
