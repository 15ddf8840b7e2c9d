// SPDX-License-Identifier: LGPL-3.0-or-later
// The export identity a layout store holds (store/layout_store.hpp): drawn once when the
// store is first opened, the same after every reopen, different between stores, given to
// a store made before identities (schema version 2) when it is opened, whose files keep
// the data-file names they were recorded with; a damaged identity is refused, never
// replaced by a new one.
#include "cmocka_cpp.hpp"
#include "model/naming.hpp"
#include "scratch_dir.hpp"
#include "store/layout_store.hpp"

#include <cstring>
#include <filesystem>
#include <sqlite3.h>
#include <unistd.h>

using namespace flexfiles::mds;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
    return ::scratch_dir("ff-store-identity");
}

std::string store_path(const char* name) {
    fs::path p = scratch_dir() / name / "layouts.db";
    fs::remove_all(p.parent_path());
    return p.string();
}

std::unique_ptr<LayoutStore> open_ok(const std::string& path) {
    auto r = LayoutStore::open(path);
    if (!r.ok())
        print_message("open failed: %s\n", r.status.error.c_str());
    assert_true(r.ok());
    return std::move(r.value);
}

// Runs SQL on a closed store as another program (the sqlite3 shell, an older MDS) would.
void sql(const std::string& path, const char* statements) {
    sqlite3* db = nullptr;
    assert_int_equal(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, statements, nullptr, nullptr, &err);
    if (rc != SQLITE_OK)
        print_message("%s: %s\n", statements, err != nullptr ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    assert_int_equal(rc, SQLITE_OK);
}

DataFileMap legacy_map(std::uint64_t file_id) {
    DataFileMap map;
    map.file_id = file_id;
    map.stripe_unit = 1u << 20;
    for (std::uint32_t m = 0; m < 2; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = 1 + m;
        df.deviceid = flexfiles::fleet::make_deviceid(df.ds_id);
        df.fh = {1, 2, static_cast<std::uint8_t>(m)};
        df.name = flexfiles::fleet::legacy_data_file_name(file_id, m);
        map.files.push_back(df);
    }
    return map;
}

const ObjectKey kKey{0xaa, 0xbb};

void test_created_once_and_kept(void**) {
    const std::string path = store_path("kept");
    std::uint64_t first = 0;
    {
        auto store = open_ok(path);
        first = store->identity();
        assert_true(first != 0);
        print_message("identity %s\n", flexfiles::fleet::identity_hex(first).c_str());
    }
    for (int i = 0; i < 3; ++i) {
        auto store = open_ok(path);
        assert_true(store->identity() == first);
    }
    // Another store: another identity.
    auto other = open_ok(store_path("other"));
    assert_true(other->identity() != 0);
    assert_true(other->identity() != first);
}

void test_old_store_gets_one_and_keeps_its_names(void**) {
    const std::string path = store_path("old");
    {
        auto store = open_ok(path);
        assert_true(store->put(kKey, legacy_map(0x4d2)).ok());
        PendingRemoval r;
        r.ds_id = 3;
        r.name = flexfiles::fleet::legacy_data_file_name(0x63, 0);
        r.fh = {9};
        r.file_id = 0x63;
        assert_true(store->queue_removals({r}).ok());
    }
    // What a store of schema version 2 (before identities) looks like.
    sql(path, "DROP TABLE store_identity; PRAGMA user_version=2;");
    std::uint64_t given = 0;
    {
        auto store = open_ok(path);
        given = store->identity();
        assert_true(given != 0);
        // Its files keep the names they were recorded with.
        auto got = store->get(kKey);
        assert_true(got.ok() && got.value.has_value());
        assert_true(*got.value == legacy_map(0x4d2));
        assert_string_equal(got.value->files[1].name.c_str(), "ff-00000000000004d2-m1");
        auto pending = store->all_removals();
        assert_int_equal(pending.value.size(), 1);
        assert_string_equal(pending.value[0].name.c_str(), "ff-0000000000000063-m0");
    }
    auto store = open_ok(path);
    assert_true(store->identity() == given);
}

void test_damaged_identity_is_refused(void**) {
    const std::string path = store_path("damaged");
    open_ok(path).reset();
    sql(path, "UPDATE store_identity SET value = 'not hex at all!!'");
    auto bad = LayoutStore::open(path);
    assert_false(bad.ok());
    print_message("%s\n", bad.status.error.c_str());
    assert_non_null(std::strstr(bad.status.error.c_str(), "identity"));
    assert_non_null(std::strstr(bad.status.error.c_str(), "not hex at all!!"));
    // Nothing was replaced: still refused.
    assert_false(LayoutStore::open(path).ok());

    const std::string zero = store_path("zero");
    open_ok(zero).reset();
    sql(zero, "UPDATE store_identity SET value = '0000000000000000'");
    assert_false(LayoutStore::open(zero).ok());
}

int teardown_all(void**) {
    fs::remove_all(scratch_dir());
    return 0;
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_once_and_kept),
        cmocka_unit_test(test_old_store_gets_one_and_keeps_its_names),
        cmocka_unit_test(test_damaged_identity_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, teardown_all);
}
