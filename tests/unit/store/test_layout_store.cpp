// SPDX-License-Identifier: LGPL-3.0-or-later
// The layout store (fsal_flexfiles/mds/layout_store.hpp): maps round-trip, survive a
// reopen (an MDS restart), removal is atomic with queueing, create intents are recovered,
// the removal queue's scheduling, the marks of files under RW layouts survive a reopen,
// and bad files are refused with a clear error.
#include "cmocka_cpp.hpp"
#include "scratch_dir.hpp"
#include "store/layout_store.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sqlite3.h>
#include <unistd.h>

using namespace flexfiles::mds;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
    return ::scratch_dir("ff-mds-store");
}

// A store path of its own per test; parent folders are created by open().
std::string store_path(const char* name) {
    fs::path p = scratch_dir() / name / "nested" / "layouts.db";
    fs::remove_all(p.parent_path().parent_path());
    return p.string();
}

std::unique_ptr<LayoutStore> open_ok(const std::string& path) {
    auto r = LayoutStore::open(path);
    if (!r.ok())
        print_message("open failed: %s\n", r.status.error.c_str());
    assert_true(r.ok());
    assert_non_null(r.value.get());
    return std::move(r.value);
}

DataFileMap sample_map(std::uint64_t file_id, unsigned mirrors) {
    DataFileMap map;
    map.file_id = file_id;
    map.stripe_unit = 1u << 20;
    for (unsigned m = 0; m < mirrors; ++m) {
        DataFile df;
        df.mirror = m;
        df.ds_id = 10 + m;
        df.deviceid = flexfiles::fleet::make_deviceid(df.ds_id);
        df.fh = {0x01, 0x02, static_cast<std::uint8_t>(m), 0xff, 0x00, 0x7f};
        df.name = "ff-" + std::to_string(file_id) + "-m" + std::to_string(m);
        df.fencing_uid = 1000000 + m;
        df.fencing_gid = 2000000 + m;
        map.files.push_back(df);
    }
    return map;
}

const ObjectKey kKeyA{0xde, 0xad, 0x00, 0xbe, 0xef};
const ObjectKey kKeyB{0x01, 0x02, 0x03};

void test_round_trip(void**) {
    auto store = open_ok(store_path("round_trip"));
    auto none = store->get(kKeyA);
    assert_true(none.ok());
    assert_false(none.value.has_value());

    const DataFileMap a = sample_map(1234, 2);
    assert_true(store->put(kKeyA, a).ok());
    auto got = store->get(kKeyA);
    assert_true(got.ok());
    assert_true(got.value.has_value());
    assert_true(*got.value == a);
    // Fileids above 2^63 are stored bit for bit.
    DataFileMap big = sample_map(0xfedcba9876543210ull, 3);
    big.files[2].ds_id = ~0ull;
    assert_true(store->put(kKeyB, big).ok());
    assert_true(*store->get(kKeyB).value == big);
    assert_int_equal(store->file_count().value, 2);

    // put replaces the whole map (fewer mirrors: no row of the old one is left).
    const DataFileMap smaller = sample_map(1234, 1);
    assert_true(store->put(kKeyA, smaller).ok());
    assert_true(*store->get(kKeyA).value == smaller);
    assert_int_equal(store->file_count().value, 2);
}

void test_restart_is_reopen(void**) {
    const std::string path = store_path("restart");
    const DataFileMap a = sample_map(77, 2);
    {
        auto store = open_ok(path);
        assert_true(store->put(kKeyA, a).ok());
        PendingRemoval r;
        r.ds_id = 3;
        r.name = "ff-0000000000000063-m0";
        r.fh = {9, 9, 9};
        r.file_id = 99;
        r.next_attempt_ms = 5;
        assert_true(store->queue_removals({r}).ok());
    }
    auto store = open_ok(path);
    auto got = store->get(kKeyA);
    assert_true(got.ok() && got.value.has_value());
    assert_true(*got.value == a);
    auto pending = store->all_removals();
    assert_true(pending.ok());
    assert_int_equal(pending.value.size(), 1);
    assert_string_equal(pending.value[0].name.c_str(), "ff-0000000000000063-m0");
    assert_true(pending.value[0].fh == (std::vector<std::uint8_t>{9, 9, 9}));
    assert_int_equal(pending.value[0].file_id, 99);
}

void test_second_opener_is_refused(void**) {
    const std::string path = store_path("exclusive");
    auto first = open_ok(path);
    auto second = LayoutStore::open(path);
    assert_false(second.ok());
    print_message("%s\n", second.status.error.c_str());
    assert_non_null(std::strstr(second.status.error.c_str(), "another ganesha.nfsd"));
    assert_non_null(std::strstr(second.status.error.c_str(), path.c_str()));
    first.reset();
    assert_true(LayoutStore::open(path).ok());
}

void test_remove_file_queues_its_data_files(void**) {
    auto store = open_ok(store_path("remove"));
    const DataFileMap a = sample_map(500, 2);
    assert_true(store->put(kKeyA, a).ok());
    assert_true(store->put(kKeyB, sample_map(501, 1)).ok());

    auto removed = store->remove_file(kKeyA);
    assert_true(removed.ok());
    assert_true(removed.value.map.has_value());
    assert_true(*removed.value.map == a);
    assert_int_equal(removed.value.queued.size(), 2);
    for (std::size_t i = 0; i < 2; ++i) {
        const PendingRemoval& r = removed.value.queued[i];
        assert_true(r.id > 0);
        assert_int_equal(r.ds_id, a.files[i].ds_id);
        assert_string_equal(r.name.c_str(), a.files[i].name.c_str());
        assert_true(r.fh == a.files[i].fh);
        assert_int_equal(r.file_id, 500);
        assert_int_equal(r.attempts, 0);
    }
    assert_false(store->get(kKeyA).value.has_value());
    assert_true(store->get(kKeyB).value.has_value()); // the other file is untouched
    assert_int_equal(store->file_count().value, 1);
    assert_int_equal(store->pending_removal_count().value, 2);
    // Everything just queued is due now.
    assert_int_equal(store->due_removals(wall_clock_ms(), 10).value.size(), 2);

    // A file with no map: nothing to queue.
    auto nothing = store->remove_file(kKeyA);
    assert_true(nothing.ok());
    assert_false(nothing.value.map.has_value());
    assert_true(nothing.value.queued.empty());
    assert_int_equal(store->pending_removal_count().value, 2);
}

void test_interrupted_create_is_recovered(void**) {
    const std::string path = store_path("intents");
    {
        auto store = open_ok(path);
        assert_true(
            store
                ->record_create_intent(
                    kKeyA, 42, {{1, "ff-000000000000002a-m0"}, {2, "ff-000000000000002a-m1"}})
                .ok());
        // A create that finished: put() drops its intents.
        assert_true(store->record_create_intent(kKeyB, 43, {{1, "ff-000000000000002b-m0"}}).ok());
        assert_true(store->put(kKeyB, sample_map(43, 1)).ok());
        // The MDS "crashes" here, with kKeyA's create half done.
    }
    auto store = open_ok(path);
    auto recovered = store->recover_interrupted_creates();
    assert_true(recovered.ok());
    assert_int_equal(recovered.value, 2);
    auto pending = store->all_removals().value;
    assert_int_equal(pending.size(), 2);
    assert_string_equal(pending[0].name.c_str(), "ff-000000000000002a-m0");
    assert_int_equal(pending[0].ds_id, 1);
    assert_true(pending[0].fh.empty()); // never learnt
    assert_int_equal(pending[0].file_id, 42);
    assert_string_equal(pending[1].name.c_str(), "ff-000000000000002a-m1");
    // Once only.
    assert_int_equal(store->recover_interrupted_creates().value, 0);
}

void test_abandoned_create(void**) {
    auto store = open_ok(store_path("abandon"));
    assert_true(store->record_create_intent(kKeyA, 7, {{1, "a"}, {2, "b"}}).ok());
    PendingRemoval left;
    left.ds_id = 2;
    left.name = "b";
    left.fh = {1};
    left.file_id = 7;
    left.next_attempt_ms = wall_clock_ms();
    left.last_error = "undo failed";
    assert_true(store->abandon_create(kKeyA, {left}).ok());
    auto pending = store->all_removals().value;
    assert_int_equal(pending.size(), 1);
    assert_string_equal(pending[0].name.c_str(), "b");
    assert_string_equal(pending[0].last_error.c_str(), "undo failed");
    assert_int_equal(store->recover_interrupted_creates().value, 0); // intents dropped
}

void test_removal_queue_scheduling(void**) {
    auto store = open_ok(store_path("queue"));
    std::vector<PendingRemoval> in;
    for (int i = 0; i < 4; ++i) {
        PendingRemoval r;
        r.ds_id = i < 2 ? 1 : 2;
        r.name = "n" + std::to_string(i);
        r.file_id = static_cast<std::uint64_t>(i);
        r.next_attempt_ms = 1000 * (i + 1); // 1000, 2000, 3000, 4000
        in.push_back(r);
    }
    auto queued = store->queue_removals(in);
    assert_true(queued.ok());
    assert_int_equal(queued.value.size(), 4);
    assert_true(queued.value[0].id < queued.value[3].id);

    auto due = store->due_removals(2500, 10).value;
    assert_int_equal(due.size(), 2);
    assert_string_equal(due[0].name.c_str(), "n0");
    assert_string_equal(due[1].name.c_str(), "n1");
    // A data server back Up: its removals are due whatever their time.
    due = store->due_removals(0, 10, {2}).value;
    assert_int_equal(due.size(), 2);
    assert_string_equal(due[0].name.c_str(), "n2");
    assert_int_equal(store->due_removals(5000, 3).value.size(), 3); // limit

    // A failed attempt moves it later and records why.
    assert_true(store->removal_failed(queued.value[0].id, 1, 9000, "timeout").ok());
    due = store->due_removals(2500, 10).value;
    assert_int_equal(due.size(), 1);
    assert_string_equal(due[0].name.c_str(), "n1");
    auto all = store->all_removals().value;
    assert_int_equal(all[0].attempts, 1);
    assert_int_equal(all[0].next_attempt_ms, 9000);
    assert_string_equal(all[0].last_error.c_str(), "timeout");

    assert_true(store->removal_exists(queued.value[1].id).value);
    assert_true(store->removal_done(queued.value[1].id).ok());
    assert_false(store->removal_exists(queued.value[1].id).value);
    assert_int_equal(store->pending_removal_count().value, 3);

    // A create taking a name cancels its queued removals (on that data server only).
    PendingRemoval same_name = in[2];
    same_name.ds_id = 1;
    assert_true(store->queue_removals({same_name}).ok());
    auto cancelled = store->cancel_removals(2, "n2");
    assert_true(cancelled.ok());
    assert_int_equal(cancelled.value, 1);
    assert_int_equal(store->pending_removal_count().value, 3);
    assert_int_equal(store->cancel_removals(2, "n2").value, 0);
}

void test_rw_grant_marks_survive_a_reopen(void**) {
    const std::string path = store_path("rw-grants");
    {
        auto store = open_ok(path);
        assert_true(store->update_rw_grants({{kKeyA, 7, {}}, {kKeyB, 8, {}}}, {}).ok());
        assert_true(store->update_rw_grants({{kKeyA, 7, {}}}, {kKeyB}).ok()); // A kept, B dropped
    }
    auto store = open_ok(path);
    auto marks = store->rw_grants();
    assert_true(marks.ok());
    assert_int_equal(marks.value.size(), 1);
    assert_true(marks.value[0] == (RwGrantMark{kKeyA, 7, {}}));
    assert_true(store->update_rw_grants({}, {kKeyA}).ok());
    assert_true(store->rw_grants().value.empty());
    // A create's map and its mark in one transaction.
    assert_true(store->put(kKeyB, sample_map(8, 2), /*mark_rw=*/true).ok());
    marks = store->rw_grants();
    assert_int_equal(marks.value.size(), 1);
    assert_true(marks.value[0] == (RwGrantMark{kKeyB, 8, {}}));
}

// On a shared namespace a mark also records the file's host handle (the next start reaches
// the object through it); it goes with the mark, and a mark without one reads back empty.
void test_rw_grant_marks_keep_their_host_handle(void**) {
    const std::string path = store_path("rw-grant-handles");
    const std::vector<std::uint8_t> host_a{1, 2, 3}, host_b{9, 8};
    {
        auto store = open_ok(path);
        assert_true(store->update_rw_grants({{kKeyA, 7, host_a}}, {}).ok());
        assert_true(store->put(kKeyB, sample_map(8, 2), true, {}, host_b).ok());
    }
    auto store = open_ok(path);
    auto marks = store->rw_grants().value;
    assert_int_equal(marks.size(), 2);
    assert_true(marks[0] == (RwGrantMark{kKeyA, 7, host_a}));
    assert_true(marks[1] == (RwGrantMark{kKeyB, 8, host_b}));
    // Dropped with its mark; marked again without one, it has none.
    assert_true(store->update_rw_grants({}, {kKeyA}).ok());
    assert_true(store->update_rw_grants({{kKeyA, 7, {}}}, {}).ok());
    marks = store->rw_grants().value;
    assert_int_equal(marks.size(), 2);
    assert_true(marks[0] == (RwGrantMark{kKeyA, 7, {}}));
}

// The host handles the resilverer reaches files with on a shared namespace: kept across a
// reopen, replaced, and gone with the file's map.
void test_host_handles_live_as_long_as_the_map(void**) {
    const std::string path = store_path("host-handles");
    const std::vector<std::uint8_t> first{1, 2, 3}, second{4, 5};
    {
        auto store = open_ok(path);
        assert_true(store->put(kKeyA, sample_map(7, 2)).ok());
        assert_true(store->host_handle(kKeyA).value.empty());
        assert_true(store->record_host_handle(kKeyA, first).ok());
    }
    auto store = open_ok(path);
    assert_true(store->host_handle(kKeyA).value == first);
    assert_true(store->record_host_handle(kKeyA, second).ok());
    assert_true(store->host_handle(kKeyA).value == second);
    assert_true(store->remove_file(kKeyA).ok());
    auto gone = store->host_handle(kKeyA);
    assert_true(gone.ok());
    assert_true(gone.value.empty());
}

void test_bad_files_are_refused(void**) {
    auto relative = LayoutStore::open("relative/layouts.db");
    assert_false(relative.ok());
    assert_non_null(std::strstr(relative.status.error.c_str(), "must be absolute"));

    const fs::path garbage = scratch_dir() / "garbage.db";
    {
        std::ofstream out(garbage);
        out << "this is not an SQLite database, just some text that is long enough to matter\n";
        for (int i = 0; i < 100; ++i)
            out << "garbage garbage garbage garbage\n";
    }
    auto bad = LayoutStore::open(garbage.string());
    assert_false(bad.ok());
    print_message("%s\n", bad.status.error.c_str());
    assert_non_null(std::strstr(bad.status.error.c_str(), garbage.c_str()));

    // A store of another schema version is not guessed at.
    const std::string other = store_path("version");
    open_ok(other).reset();
    sqlite3* db = nullptr;
    assert_int_equal(sqlite3_open(other.c_str(), &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr),
                     SQLITE_OK);
    sqlite3_close(db);
    auto wrong = LayoutStore::open(other);
    assert_false(wrong.ok());
    assert_non_null(std::strstr(wrong.status.error.c_str(), "schema version 99"));

    // A folder it cannot create.
    const fs::path file = scratch_dir() / "a-file";
    std::ofstream(file) << "x";
    auto nofolder = LayoutStore::open((file / "sub" / "layouts.db").string());
    assert_false(nofolder.ok());
    assert_non_null(std::strstr(nofolder.status.error.c_str(), "cannot create folder"));
}

int teardown_all(void**) {
    fs::remove_all(scratch_dir());
    return 0;
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_restart_is_reopen),
        cmocka_unit_test(test_second_opener_is_refused),
        cmocka_unit_test(test_remove_file_queues_its_data_files),
        cmocka_unit_test(test_interrupted_create_is_recovered),
        cmocka_unit_test(test_abandoned_create),
        cmocka_unit_test(test_removal_queue_scheduling),
        cmocka_unit_test(test_rw_grant_marks_survive_a_reopen),
        cmocka_unit_test(test_rw_grant_marks_keep_their_host_handle),
        cmocka_unit_test(test_host_handles_live_as_long_as_the_map),
        cmocka_unit_test(test_bad_files_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, teardown_all);
}
