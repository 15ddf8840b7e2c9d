// SPDX-License-Identifier: LGPL-3.0-or-later
// What the management interface asks the layout store (fsal_flexfiles/mds/layout_store.hpp):
// per data server, the data files in maps, creates in progress and pending removals (what
// RemoveDataServer refuses on); and every file's fileid (what FlushCache flushes).
#include "cmocka_cpp.hpp"
#include "store/layout_store.hpp"

#include <algorithm>
#include <filesystem>
#include <unistd.h>

using namespace flexfiles::mds;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<LayoutStore> fresh_store() {
    const fs::path dir = fs::temp_directory_path() / ("ff-mgmt-store-" + std::to_string(getpid()));
    fs::remove_all(dir);
    auto r = LayoutStore::open((dir / "layouts.db").string());
    if (!r.ok())
        print_message("open failed: %s\n", r.status.error.c_str());
    assert_true(r.ok());
    return std::move(r.value);
}

DataFileMap map_on(std::uint64_t file_id, std::vector<std::uint64_t> ds_ids) {
    DataFileMap map;
    map.file_id = file_id;
    map.stripe_unit = 1u << 20;
    for (std::uint32_t m = 0; m < ds_ids.size(); ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = ds_ids[m];
        df.deviceid = flexfiles::fleet::make_deviceid(df.ds_id);
        df.fh = {0x01, static_cast<std::uint8_t>(file_id), static_cast<std::uint8_t>(m)};
        df.name = "ff-" + std::to_string(file_id) + "-m" + std::to_string(m);
        map.files.push_back(df);
    }
    return map;
}

void usage_counts_maps_intents_and_removals(void**) {
    auto store = fresh_store();
    auto empty = store->usage_by_data_server();
    assert_true(empty.ok());
    assert_true(empty.value.empty());

    assert_true(store->put({1}, map_on(101, {1, 2})).ok());
    assert_true(store->put({2}, map_on(102, {1, 3})).ok());
    assert_true(store->put({3}, map_on(103, {2, 3})).ok());
    assert_true(store->record_create_intent({4}, 104, {{3, "ff-104-m0"}}).ok());
    PendingRemoval r;
    r.ds_id = 4;
    r.name = "ff-99-m0";
    r.file_id = 99;
    assert_true(store->queue_removals({r}).ok());

    auto usage = store->usage_by_data_server();
    assert_true(usage.ok());
    assert_int_equal(usage.value.size(), 4);
    assert_int_equal(usage.value.at(1).data_files, 2);
    assert_int_equal(usage.value.at(2).data_files, 2);
    assert_int_equal(usage.value.at(3).data_files, 2);
    assert_int_equal(usage.value.at(3).creates_pending, 1);
    assert_int_equal(usage.value.at(3).total(), 3);
    assert_int_equal(usage.value.at(4).data_files, 0);
    assert_int_equal(usage.value.at(4).removals_pending, 1);

    // Removing a file moves its data files from the maps to the removal queue.
    assert_true(store->remove_file({1}).ok());
    usage = store->usage_by_data_server();
    assert_int_equal(usage.value.at(1).data_files, 1);
    assert_int_equal(usage.value.at(1).removals_pending, 1);
}

void file_ids_lists_every_mapped_file(void**) {
    auto store = fresh_store();
    assert_true(store->file_ids().value.empty());
    assert_true(store->put({1}, map_on(7, {1})).ok());
    assert_true(store->put({2}, map_on(9, {2})).ok());
    auto ids = store->file_ids();
    assert_true(ids.ok());
    std::sort(ids.value.begin(), ids.value.end());
    assert_int_equal(ids.value.size(), 2);
    assert_int_equal(ids.value[0], 7);
    assert_int_equal(ids.value[1], 9);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_counts_maps_intents_and_removals),
        cmocka_unit_test(file_ids_lists_every_mapped_file),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
