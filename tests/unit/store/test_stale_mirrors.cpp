// SPDX-License-Identifier: LGPL-3.0-or-later
// Stale mirrors (fsal_flexfiles/mds/stale_mirrors.hpp) and their marks in the layout store:
// marks persist and go with the file, the last in-sync mirror is never marked, a copy is
// taken for complete only when nothing wrote the file meanwhile (writes through the MDS,
// RW layouts granted), and a store of schema version 1 is upgraded in place.
#include "cmocka_cpp.hpp"
#include "store/stale_mirrors.hpp"

#include <cstring>
#include <filesystem>
#include <sqlite3.h>
#include <unistd.h>

using namespace flexfiles::mds;
namespace fs = std::filesystem;

namespace {

std::string fresh_store(const char* name) {
    const fs::path dir =
        fs::temp_directory_path() / ("ff-stale-" + std::to_string(getpid())) / name;
    fs::remove_all(dir);
    return (dir / "layouts.db").string();
}

std::unique_ptr<LayoutStore> open_ok(const std::string& path) {
    auto r = LayoutStore::open(path);
    if (!r.ok())
        print_message("open failed: %s\n", r.status.error.c_str());
    assert_true(r.ok());
    return std::move(r.value);
}

const ObjectKey kKey{0xaa, 0x01};

DataFileMap map_of(std::uint64_t file_id, unsigned mirrors) {
    DataFileMap map;
    map.file_id = file_id;
    map.stripe_unit = 1u << 20;
    for (unsigned m = 0; m < mirrors; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = 10 + m;
        df.deviceid = flexfiles::fleet::make_deviceid(df.ds_id);
        df.fh = {0x01, static_cast<std::uint8_t>(m)};
        df.name = "ff-" + std::to_string(file_id) + "-m" + std::to_string(m);
        map.files.push_back(df);
    }
    return map;
}

void test_marks_persist_and_go_with_the_file(void**) {
    const std::string path = fresh_store("persist");
    {
        auto store = open_ok(path);
        assert_true(store->put(kKey, map_of(7, 3)).ok());
        // A mirror the file does not have: refused, and nothing of the batch is marked.
        const StoreStatus bad = store->mark_stale(kKey, 7, {1, 5}, "WRITE failed");
        assert_false(bad.ok());
        assert_non_null(std::strstr(bad.error.c_str(), "has no mirror 5"));
        assert_true(store->stale_mirrors().value.empty());

        assert_true(store->mark_stale(kKey, 7, {1}, "WRITE failed: ds 11 timed out").ok());
        assert_true(store->mark_stale(kKey, 7, {1}, "again").ok()); // keeps the first
        auto usage = store->usage_by_data_server();
        assert_int_equal(usage.value.at(11).stale_data_files, 1);
        assert_int_equal(usage.value.at(10).stale_data_files, 0);
        // Replacing the map (fencing ids change) keeps the mark.
        assert_true(store->put(kKey, map_of(7, 3)).ok());
    }
    auto store = open_ok(path); // an MDS restart
    auto marks = store->stale_mirrors();
    assert_true(marks.ok());
    assert_int_equal(marks.value.size(), 1);
    assert_int_equal(marks.value[0].file_id, 7);
    assert_int_equal(marks.value[0].mirror, 1);
    assert_true(marks.value[0].key == kKey);
    assert_string_equal(marks.value[0].reason.c_str(), "WRITE failed: ds 11 timed out");

    assert_true(store->clear_stale(kKey, 1).ok());
    assert_true(store->stale_mirrors().value.empty());
    assert_true(store->mark_stale(kKey, 7, {2}, "x").ok());
    assert_true(store->remove_file(kKey).ok());
    assert_true(store->stale_mirrors().value.empty());
}

void test_a_version_1_store_is_upgraded(void**) {
    const std::string path = fresh_store("upgrade");
    {
        auto store = open_ok(path);
        assert_true(store->put(kKey, map_of(9, 2)).ok());
    }
    {
        // What version 1 looked like: no stale_mirrors table.
        sqlite3* db = nullptr;
        assert_int_equal(sqlite3_open(path.c_str(), &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "DROP TABLE stale_mirrors; PRAGMA user_version=1",
                                      nullptr, nullptr, nullptr),
                         SQLITE_OK);
        sqlite3_close(db);
    }
    auto store = open_ok(path);
    auto map = store->get(kKey);
    assert_true(map.ok() && map.value.has_value());
    assert_true(*map.value == map_of(9, 2));
    assert_true(store->mark_stale(kKey, 9, {0}, "WRITE failed").ok());
    assert_int_equal(store->stale_mirrors().value.size(), 1);
}

void test_the_last_in_sync_mirror_is_never_marked(void**) {
    auto store = open_ok(fresh_store("last"));
    assert_true(store->put(kKey, map_of(5, 2)).ok());
    StaleMirrors stale(*store);
    assert_true(stale.load().ok());
    assert_int_equal(stale.count(), 0);
    assert_true(stale.of(5).empty());

    const StoreStatus both = stale.mark(kKey, 5, 2, {0, 1}, "both failed");
    assert_false(both.ok());
    assert_non_null(std::strstr(both.error.c_str(), "no in-sync mirror"));
    assert_int_equal(stale.count(), 0);
    assert_true(store->stale_mirrors().value.empty());

    assert_true(stale.mark(kKey, 5, 2, {1}, "one failed").ok());
    assert_true(stale.of(5) == std::vector<std::uint32_t>{1});
    assert_false(stale.mark(kKey, 5, 2, {0}, "then the other").ok());
    assert_true(stale.of(5) == std::vector<std::uint32_t>{1});
    assert_int_equal(store->stale_mirrors().value.size(), 1);
}

void test_a_copy_counts_only_if_nothing_wrote_meanwhile(void**) {
    auto store = open_ok(fresh_store("epoch"));
    assert_true(store->put(kKey, map_of(3, 3)).ok());
    StaleMirrors stale(*store);
    assert_false(stale.quiet_epoch(3).has_value()); // no marks: nothing to copy
    assert_true(stale.mark(kKey, 3, 3, {2}, "WRITE failed").ok());

    // A write through the MDS in flight: no copy starts.
    std::optional<std::uint64_t> epoch;
    {
        WriteBracket write(&stale, 3);
        assert_false(stale.quiet_epoch(3).has_value());
    }
    epoch = stale.quiet_epoch(3);
    assert_true(epoch.has_value());

    // A write during the copy: not cleared.
    { WriteBracket write(&stale, 3); }
    auto r = stale.clear_if_quiet(kKey, 3, 2, *epoch);
    assert_true(r.ok());
    assert_false(r.value);

    // An RW layout granted during the copy: not cleared; a READ layout changes nothing.
    epoch = stale.quiet_epoch(3);
    assert_true(stale.for_layout(3, true) == std::vector<std::uint32_t>{2});
    assert_false(stale.clear_if_quiet(kKey, 3, 2, *epoch).value);
    epoch = stale.quiet_epoch(3);
    assert_true(stale.for_layout(3, false) == std::vector<std::uint32_t>{2});
    assert_true(stale.for_layout(4, true).empty());

    // A writer in flight at the end: not cleared either.
    {
        WriteBracket write(&stale, 3);
        assert_false(stale.clear_if_quiet(kKey, 3, 2, *epoch).value);
    }
    epoch = stale.quiet_epoch(3);
    r = stale.clear_if_quiet(kKey, 3, 2, *epoch);
    assert_true(r.ok());
    assert_true(r.value);
    assert_true(stale.of(3).empty());
    assert_int_equal(stale.count(), 0);
    assert_true(store->stale_mirrors().value.empty());
}

void test_new_marks_call_the_hook(void**) {
    auto store = open_ok(fresh_store("hook"));
    assert_true(store->put(kKey, map_of(21, 3)).ok());
    std::vector<std::uint64_t> called;
    StaleMirrors stale(*store, [&](const ObjectKey& key, std::uint64_t file_id, std::uint64_t) {
        assert_true(key == kKey);
        called.push_back(file_id);
    });
    assert_true(stale.mark(kKey, 21, 3, {0}, "WRITE failed").ok());
    assert_int_equal(called.size(), 1);
    assert_true(stale.mark(kKey, 21, 3, {0}, "WRITE failed again").ok()); // nothing new
    assert_false(stale.mark(kKey, 21, 3, {1, 2}, "all").ok());            // refused
    assert_int_equal(called.size(), 1);
    assert_true(stale.mark(kKey, 21, 3, {2}, "COMMIT failed").ok());
    assert_int_equal(called.size(), 2);
}

void test_load_and_forget(void**) {
    const std::string path = fresh_store("load");
    {
        auto store = open_ok(path);
        assert_true(store->put(kKey, map_of(11, 3)).ok());
        assert_true(store->put(ObjectKey{0xbb}, map_of(12, 2)).ok());
        StaleMirrors stale(*store);
        assert_true(stale.mark(kKey, 11, 3, {0, 2}, "WRITE failed").ok());
        assert_true(stale.mark(ObjectKey{0xbb}, 12, 2, {1}, "SETATTR(size) failed").ok());
    }
    auto store = open_ok(path);
    StaleMirrors stale(*store);
    assert_true(stale.load().ok());
    assert_int_equal(stale.count(), 3);
    assert_true((stale.of(11) == std::vector<std::uint32_t>{0, 2}));
    assert_true(stale.of(12) == std::vector<std::uint32_t>{1});
    assert_int_equal(stale.list().size(), 3);

    assert_true(store->remove_file(kKey).ok());
    stale.forget(11);
    assert_true(stale.of(11).empty());
    assert_int_equal(stale.count(), 1);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marks_persist_and_go_with_the_file),
        cmocka_unit_test(test_a_version_1_store_is_upgraded),
        cmocka_unit_test(test_the_last_in_sync_mirror_is_never_marked),
        cmocka_unit_test(test_a_copy_counts_only_if_nothing_wrote_meanwhile),
        cmocka_unit_test(test_new_marks_call_the_hook),
        cmocka_unit_test(test_load_and_forget),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    fs::remove_all(fs::temp_directory_path() / ("ff-stale-" + std::to_string(getpid())));
    return failed;
}
